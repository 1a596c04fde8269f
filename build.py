"""Build the course site: data/ + lessons/ + site/ -> _site/ (static HTML, CSS, JS, numbers.json, changes.json).

    python build.py [--root DIR] [--out DIR]        # default: the repo, DIR/_site

build() reads top to bottom like a table of contents. It first gathers everything in memory (models, data,
numbers, lessons, pages), validating each input once and collecting every problem; if there are any, each is
printed as one line (file, line or key, what was expected), the exit status is 1 and the previous output folder
is left exactly as it was. Only then is everything written into a new sibling folder, which is swapped in
(sitegen/swap.py: one atomic exchange on Linux; the output folder is always the old site or the new one, whatever
is killed when, and the next build cleans up after a killed one). Finally the change report says which computed
numbers moved since the previous build.

Lessons and their widgets are not listed here: a lesson is a folder, lessons/<id>/ (its lesson.md, its Python
declaring its numbers and widgets, experiments.widget, its templates/, its script.js), and the build finds every
one under the root it is given (experiments.lessons.course(root); sitegen/widgets.py renders a widget from its
declaration). Everything is read from that root and nothing is kept from one build to the next, so one process
can build several courses. Two things are reused, each only while what it is computed from is byte for byte the
same: the widget answers (sitegen/answer_cache.py, on disk; --no-cache) and, within one process, the course's
numbers (_NUMBERS below).
Extending the output: OUTPUT_STEPS.append(step), step(site, dest) writes more files into the new folder before it
is swapped in.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shutil
import sys
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from experiments.errors import ConfigError, CourseError, Problem
from experiments.ledger import jsontext
from experiments.lessons import LESSON_FILE
from sitegen import changes, jscheck, markdown, messages, minify, pages, swap
from sitegen import widgets as widget_renderers
from sitegen.answer_cache import AnswerCache, default_folder, source_digest
from sitegen.claims import claim_names
from sitegen.errors import BuildError, LessonError, SourceError
from sitegen.models import browser_json
from sitegen.offline import write_offline
from sitegen.scripts import ScriptBundles

ROOT = Path(__file__).resolve().parent
CHAPTER_STATUSES = ("written", "planned")
DATA_FILE_BYTES = 10_000_000   # data/*.json: the outline, citations, counts (each a few kB today)
SOURCE_FOLDERS = ("site", "lessons", "data")   # what the build reads and copies (besides the experiments/ package)
NUMBER_INPUTS = ("data/course.json", "data/reference_counts.json", "data/citations.json",   # besides data/models/
                 "data/train_runs.json", "data/hybrid_layouts.json", "data/train_stability.json",
                 "data/train_lr_sweep.json")


@dataclass
class Site:
    """Everything one build gathers before it writes anything."""
    root: Path
    out: Path
    widgets: dict[str, markdown.WidgetRenderer]
    steps: list[Callable[[Site, Path], None]]
    declared: tuple = ()                                         # the lesson packages' Lesson declarations
    packages: Any = None                                         # experiments.lessons.Course: root/lessons/'s Python
    models: dict[str, dict] = field(default_factory=dict)        # id -> data/models/<id>/ as {meta, config}
    data: dict[str, Any] = field(default_factory=dict)           # name -> data/<name>.json (course, ...)
    numbers: dict[str, Any] | None = None                        # name -> experiments.numbers.Number
    model_numbers: dict[str, Any] = field(default_factory=dict)  # alias -> course_numbers.ModelNumbers
    lessons: list[markdown.Lesson] = field(default_factory=list) # in course order
    lesson_files: dict[str, str] = field(default_factory=dict)   # id (folder name) -> its lesson.md, rendered or not
    pages: dict[str, str] = field(default_factory=dict)          # output path -> HTML
    files: dict[str, str | bytes] = field(default_factory=dict)  # output path -> other generated content
    uses: list[dict] = field(default_factory=list)               # every number on a page: {name, page, id, style}
    report: list[str] = field(default_factory=list)              # change report lines
    claims: list[dict] = field(default_factory=list)             # {claim}s checked: {id, text, page, numbers}
    errors: list[CourseError] = field(default_factory=list)
    answers: AnswerCache = field(default_factory=lambda: AnswerCache(None))   # the widget answers' cache
    broken: set[str] = field(default_factory=set)                # input files that failed validation

    @property
    def course(self) -> dict:
        return self.data.get("course") or {}

    def fail(self, error: CourseError, file: str | None = None) -> None:
        """Record a problem; `file` marks an input file as unusable."""
        self.errors.append(error)
        if file:
            self.broken.add(file)

    def stop_if_errors(self) -> None:
        if self.errors:
            raise BuildError(self.errors)


# Output steps: step(site, dest) writes more files into the temporary output folder before it is swapped in.
OUTPUT_STEPS: list[Callable[[Site, Path], None]] = []


def build(root: Path = ROOT, out: Path | None = None, *, widgets: dict | None = None,
          steps: list | None = None, lessons: tuple | None = None, cache: Path | None | bool = True) -> Site:
    from experiments.lessons import course
    root = Path(root).resolve()
    found = course(root)     # each lesson folder's Python, imported from this root (widgets: its renderers)
    answers = AnswerCache(default_folder(ROOT) if cache is True else cache or None)   # (sitegen/answer_cache.py)
    site = Site(root, Path(out).resolve() if out else root / "_site",
                widget_renderers.renderers(found, root, answers) if widgets is None else widgets,
                OUTPUT_STEPS if steps is None else steps, tuple(found.lessons if lessons is None else lessons),
                packages=found, answers=answers)
    check_links(site)        # no symbolic link in what the build reads or copies points outside the course
    load_models(site)        # data/models/<id>/ -> site.models ({meta, config}, every config validated)
    load_data(site)          # data/*.json -> site.data (data/course.json validated)
    check_derived(site)      # the stored runs and measurements were made from today's text, config and trainer
    check_declarations(site) # every reference a lesson package declares resolves (functions, templates, scripts)
    compute_numbers(site)    # experiments.course_numbers -> site.numbers
    load_lessons(site)       # lessons/*/lesson.md -> site.lessons (front matter, callouts, widgets, numbers, claims)
    check_outline(site)      # data/course.json chapters <-> lessons
    site.stop_if_errors()    # nothing is written unless every input is good
    render_pages(site)       # index.html + one page per lesson (Jinja2, site/templates)
    mark_number_uses(site)   # an id on every number on a page (use-NAME-K), recorded in site.uses
    compare_numbers(site)    # numbers.json; changes.json and changes.html against the previous build
    write_site(site)         # temporary sibling folder: static/, pages, files, OUTPUT_STEPS; then swapped in
    report_changes(site)     # print the change report
    site.answers.prune()     # the answer cache kept under its size limit (after a build that added to it)
    return site


# -- gather ----------------------------------------------------------------------------------------------------
def _rel(site: Site, path: Path) -> str:
    try:
        return path.relative_to(site.root).as_posix()
    except ValueError:
        return str(path)


def _read_json(site: Site, path: Path) -> Any:
    """Parsed JSON, or None after recording a ConfigError naming the file and what is wrong (unreadable, over
    DATA_FILE_BYTES, not UTF-8, nested too deeply, bad JSON: see experiments/ledger/jsontext.py)."""
    from sitegen.models import _read_document
    file = _rel(site, path)
    doc, errors = _read_document(path, file, lambda text: jsontext.loads(text, limit_bytes=DATA_FILE_BYTES),
                                 DATA_FILE_BYTES)
    for error in errors:
        site.fail(error, file)
    return doc


def check_links(site: Site) -> None:
    """A symbolic link in site/, lessons/, data/ (or the experiments/ package the browser gets) is followed when
    the build reads or copies it, so one pointing outside the course would put that file (a key, /etc/passwd)
    into _site/ and the published site. Each such link is refused, named; so is one that points nowhere or at a
    folder holding it (copying would never end). Links within the course are fine."""
    folders = [(site.root, site.root / name) for name in SOURCE_FOLDERS] + [(ROOT, ROOT / "experiments")]
    for base, folder in folders:
        if not folder.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(folder):   # (does not follow links to folders)
            for name in sorted(dirnames + filenames):
                path = Path(dirpath) / name
                if not path.is_symlink():
                    continue
                problem = _link_problem(path, base)
                if problem:
                    site.fail(SourceError(_rel(site, path), None, problem), _rel(site, path))


def _link_problem(link: Path, base: Path) -> str | None:
    target = os.readlink(link)
    try:
        resolved = link.resolve(strict=True)
    except (OSError, RuntimeError):   # missing target, or a loop of links
        return f"a symbolic link to {target}, which does not exist; put the file itself here"
    if not resolved.is_relative_to(base.resolve()):
        return (f"a symbolic link to {target}, outside the course folder: the build would copy that file into "
                f"the site; put the file itself here")
    if resolved.is_dir() and link.parent.resolve().is_relative_to(resolved):
        return f"a symbolic link to {target}, a folder that holds the link itself (copying it would never end)"
    return None


def load_models(site: Site) -> None:
    """data/models/<id>/config.json + meta.yaml (sitegen/models.py) -> site.models."""
    from sitegen.models import read_models
    folder = site.root / "data" / "models"
    models, errors = read_models(folder) if folder.is_dir() else ({}, [])
    for error in errors:
        site.fail(error, error.file)
    if not models and not errors:
        site.errors.append(ConfigError([Problem("", "at least one model folder data/models/<id>/ "
                                                    "(config.json + meta.yaml)")], "data/models"))
    site.models.update(models)


def load_data(site: Site) -> None:
    for path in sorted((site.root / "data").glob("*.json")):
        if _rel(site, path) in site.broken:
            continue
        doc = _read_json(site, path)
        if doc is not None:
            site.data[path.stem] = doc
    if "course" not in site.data:
        if not (site.root / "data" / "course.json").exists():
            site.errors.append(ConfigError([Problem("", "the course outline data/course.json")], "data/course.json"))
        return
    problems = course_problems(site.data["course"]) or course_model_problems(site)
    if problems:
        site.fail(ConfigError(problems, "data/course.json"), "data/course.json")
        site.data["course"] = {}


def check_derived(site: Site) -> None:
    """A derived data file (experiments/train/derived.py: the stored training runs, the measured step) whose inputs
    changed since it was made is refused by name, with the input that changed and the command that remakes it."""
    from experiments.train import derived
    for output, problem in derived.problems(site.root):
        site.fail(SourceError(output, None, problem), output)


def course_problems(course: Any) -> list[Problem]:
    """data/course.json: {title, subtitle?, chapters: [{id, title, status: written|planned, lesson?, summary?}]}."""
    if not isinstance(course, dict):
        return [Problem("", "a JSON object with 'title' and 'chapters'", course, True)]
    problems = []
    if not isinstance(course.get("title"), str):
        problems.append(Problem("title", "the course name (text)", course.get("title"), "title" in course))
    chapters = course.get("chapters")
    if not isinstance(chapters, list) or not chapters:
        return problems + [Problem("chapters", "a non-empty list of chapters", chapters, "chapters" in course)]
    seen = set()
    for i, ch in enumerate(chapters):
        key = f"chapters[{i}]"
        if not isinstance(ch, dict):
            problems.append(Problem(key, 'an object {"id", "title", "status"}', ch, True))
            continue
        if not isinstance(ch.get("id"), str) or ch["id"] in seen:
            problems.append(Problem(f"{key}.id", "a unique chapter id such as 'C4'", ch.get("id"), "id" in ch))
        seen.add(ch.get("id"))
        if ch.get("status") not in CHAPTER_STATUSES:
            problems.append(Problem(f"{key}.status", "'written' or 'planned'", ch.get("status"), "status" in ch))
        if ch.get("title") is not None and not isinstance(ch.get("title"), str):
            problems.append(Problem(f"{key}.title", "text or null", ch.get("title"), True))
        if ch.get("lesson") is not None and not isinstance(ch.get("lesson"), str):
            problems.append(Problem(f"{key}.lesson", "a lesson id (lessons/<id>/) or null", ch.get("lesson"), True))
        if ch.get("status") == "written" and not (isinstance(ch.get("lesson"), str) and ch.get("title")):
            problems.append(Problem(key, "a title and a lesson id for a written chapter", None))
    return problems


def check_declarations(site: Site) -> None:
    """Each lesson package's declarations (experiments.widget.Lesson): every function, template and script they
    name exists. A problem names the package's file and the field; a widget with one renders nowhere (its lesson
    line points here). And the scripts' side (sitegen/jscheck.py): every mount key and entry point name a widget's
    script uses is one its widgets declare, and every learner message key a script uses is in the message table
    (sitegen/messages.py), each problem at the script's file and line."""
    for error, broken in lesson_package_problems(site):
        site.fail(error, error.file if any(p.key == "numbers" for p in error.problems) else None)
        site.widgets = {**site.widgets, **{name: widget_renderers.broken_renderer(name, error.file)
                                           for name in broken}}
    declared = {w.name: w for lesson in site.declared for w in lesson.widgets}
    site.errors += jscheck.script_problems(declared, site.root)   # the JS half's names
    try:
        site.errors += jscheck.message_problems(site.root, messages.load(site.root))      # and its messages' keys
    except LessonError as e:
        site.errors.append(e)


def in_progress(site: Site, folder: Path) -> bool:
    """A lesson folder still being written: no lesson.md yet, and data/course.json does not mark its chapter
    written. Its Python's numbers count if it imports and its declarations resolve; otherwise it is left out,
    quietly (a folder with its lesson.md, or of a written chapter, fails the build instead)."""
    written = {ch.get("lesson") for ch in site.course.get("chapters", []) if ch.get("status") == "written"}
    return not (folder / LESSON_FILE).is_file() and folder.name not in written


def lesson_package_problems(site: Site) -> list:
    """A lesson folder whose __init__.py does not import fails the build, named (unless it is in progress).
    -> the problems of the in-progress lessons' declarations, which leave those lessons out instead."""
    for folder, error in site.packages.failed.items():
        if not in_progress(site, folder):
            file = _rel(site, folder / "__init__.py")
            site.fail(SourceError(file, None, f"the lesson's Python does not import ({type(error).__name__}: "
                                              f"{error})"), file)
    found = widget_renderers.declaration_problems(site.declared, site.root, site.packages)
    folders = {_rel(site, folder / "__init__.py"): folder for folder in site.packages.folders.values()}
    quiet = {error.file for error, _ in found if error.file in folders and in_progress(site, folders[error.file])}
    if quiet:
        def kept(lessons: tuple) -> tuple:
            return tuple(lesson for lesson in lessons
                         if widget_renderers.package_file(lesson.package, site.packages, site.root) not in quiet)
        site.declared = kept(site.declared)
        site.packages = dataclasses.replace(site.packages, lessons=kept(site.packages.lessons))
    return [(error, broken) for error, broken in found if error.file not in quiet]


def course_model_problems(site: Site) -> list[Problem]:
    """data/course.json names models by id (aliases, anchor_model, tracker.model): each must be a model folder
    data/models/<id>/ (one whose own files failed is reported there, not again here)."""
    course = site.data["course"]
    folders = site.root / "data" / "models"
    ids = set(site.models) | ({p.name for p in folders.iterdir() if p.is_dir()} if folders.is_dir() else set())
    listed = ", ".join(sorted(site.models)) or "none yet"
    named = [(f"aliases.{alias}", model_id) for alias, model_id in (course.get("aliases") or {}).items()] \
        if isinstance(course.get("aliases"), dict) else [("aliases", course.get("aliases"))]
    if "anchor_model" in course:
        named.append(("anchor_model", course["anchor_model"]))
    if isinstance(course.get("tracker"), dict) and "model" in course["tracker"]:
        named.append(("tracker.model", course["tracker"]["model"]))
    return [Problem(key, f"the id of a model folder data/models/<id>/ (one of {listed})", model_id, True)
            for key, model_id in named if not (isinstance(model_id, str) and model_id in ids)]


def compute_numbers(site: Site) -> None:
    if any(f.startswith(("data/models/", "experiments/")) or f in NUMBER_INPUTS
           or (f.startswith("lessons/") and f.endswith(".py")) for f in site.broken):   # (a lesson's Python)
        return  # the numbers would only repeat those problems (every lesson reference would be unknown)
    from experiments.course_numbers import compute_course
    key = _numbers_key(site)
    if key not in _NUMBERS:
        try:
            _NUMBERS[key] = compute_course(site.models, course=site.course, reference=site.data.get("reference_counts"),
                                           citations=site.data.get("citations"), data=site.data, lessons=site.packages)
        except CourseError as e:
            site.errors.append(e)
            return
        while len(_NUMBERS) > NUMBERS_KEPT:
            _NUMBERS.popitem(last=False)
    _NUMBERS.move_to_end(key)
    numbers, model_numbers = _NUMBERS[key]
    site.numbers, site.model_numbers = dict(numbers), dict(model_numbers)


# The course's numbers of the last few builds in this process, by the digest of everything they are computed from:
# the experiments package's and the lessons' Python source (tests left out) and the models and data documents read.
# Computing them is most of a small build (C14's batching simulation, every model's ledger); a process that builds
# the same course again (the tests, `make dev`) reuses them while not a byte of those inputs differs. The numbers
# are frozen (experiments.numbers.Number) and the ledgers never modified, so builds may share them.
_NUMBERS: OrderedDict[str, tuple[dict, dict]] = OrderedDict()
NUMBERS_KEPT = 4


def _numbers_key(site: Site) -> str:
    import experiments
    from experiments.ledger import canonical_key  # (a config's canonical JSON, made once: the ledger's own key)
    folders = [Path(experiments.__file__).parent, *sorted(site.packages.folders.values())]
    models = {i: {k: hashlib.sha256(canonical_key(v).encode()).hexdigest() if k == "config" else v
                  for k, v in doc.items()} for i, doc in site.models.items()}
    inputs = json.dumps([models, site.data], sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256((source_digest(folders, site.answers.folder_digests) + inputs).encode()).hexdigest()


def load_lessons(site: Site) -> None:
    data = {**site.data, "models": site.model_numbers}
    lessons = []
    for path in sorted((site.root / "lessons").glob("*.md")):   # the layout before lesson folders
        if _rel(site, path) not in site.broken:
            site.errors.append(LessonError(_rel(site, path), None, f"a lesson is a folder: move this file to "
                                                                   f"lessons/{path.stem}/{LESSON_FILE}"))
    for path in sorted((site.root / "lessons").glob(f"*/{LESSON_FILE}")):
        file = _rel(site, path)
        site.lesson_files[path.parent.name] = file
        if file in site.broken:   # (a link out of the course: reported by check_links, never read)
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            site.errors.append(LessonError(file, None, f"cannot read the lesson ({e})"))
            continue
        page = markdown.Page(file, site.numbers, widgets=site.widgets, data=data)
        try:
            lessons.append(markdown.render_lesson(text, page))
        except BuildError as e:
            site.errors += e.errors
        site.claims += [{"id": f"{file}:{line}", "text": text, "page": f"{path.parent.name}.html",
                         "numbers": claim_names(text)} for line, text, _ in page.claims]
    order = {ch.get("lesson"): i for i, ch in enumerate(site.course.get("chapters", []))}
    site.lessons = sorted(lessons, key=lambda lesson: (order.get(lesson.id, len(order)), lesson.meta.get("order") or 0,
                                                       lesson.id))


def check_outline(site: Site) -> None:
    """Every written chapter has its lesson; every lesson belongs to a written chapter with the same id."""
    if not site.course:
        return
    chapters = site.course["chapters"]
    for i, ch in enumerate(chapters):
        if ch.get("status") == "written" and ch.get("lesson") not in site.lesson_files:
            site.errors.append(ConfigError([Problem(
                f"chapters[{i}].lesson", f"an existing lesson lessons/{ch.get('lesson')}/{LESSON_FILE} for written "
                f"chapter "
                f"{ch.get('id')}", ch.get("lesson"), True)], "data/course.json"))
    by_lesson = {ch.get("lesson"): ch for ch in chapters if ch.get("lesson")}
    for lesson in site.lessons:
        ch = by_lesson.get(lesson.id)
        if ch is None:
            site.errors.append(LessonError(lesson.file, None, f"not listed in data/course.json: add a chapter with "
                                           f'"lesson": "{lesson.id}", "status": "written"'))
        elif ch.get("status") != "written":
            site.errors.append(LessonError(lesson.file, None, f"data/course.json marks chapter {ch.get('id')} as "
                                           f"{ch.get('status')!r}; set \"status\": \"written\" to publish it"))
        elif lesson.meta.get("chapter") != ch.get("id"):
            site.errors.append(LessonError(lesson.file, None, f"front matter says chapter "
                                           f"{lesson.meta.get('chapter')!r}, data/course.json lists it under "
                                           f"{ch.get('id')!r}"))


def render_pages(site: Site) -> None:
    env = pages.environment(site.root / "site" / "templates")
    by_id = {lesson.id: lesson for lesson in site.lessons}
    site.pages["index.html"] = pages.render_index_page(env, site.course, by_id)

    navs = pages.road(site.course, site.lessons)   # previous / next along the outline
    for lesson in site.lessons:
        site.pages[lesson.page] = pages.render_lesson_page(env, site.course, lesson, navs[lesson.id],
                                                            site.numbers or {}, site.model_numbers)
    bundles = cast(ScriptBundles, env.globals["script_bundle"])
    site.files.update(bundles.files())   # static/js/page-<hash>.js, one per script list


def mark_number_uses(site: Site) -> None:
    for page, text in site.pages.items():
        site.pages[page], uses = changes.mark_uses(text, page)
        site.uses += uses


def compare_numbers(site: Site) -> None:
    snap = changes.snapshot(site.numbers or {}, site.uses)
    previous = changes.read_previous(site.out)
    found = changes.compare(previous, snap, claims=site.claims)
    titles = {lesson.page: f"{lesson.meta['chapter']} {lesson.meta['title']}" for lesson in site.lessons}
    site.files[changes.NUMBERS_FILE] = changes.snapshot_json(snap)
    site.files[changes.CHANGES_FILE] = changes.as_json(found)
    site.files[changes.CHANGES_PAGE] = changes.render_page(pages.environment(site.root / "site" / "templates"),
                                                           found, previous is not None, titles)
    site.report = changes.summary(found, previous is not None, claims=len(site.claims))


# -- write -----------------------------------------------------------------------------------------------------
def write_site(site: Site) -> None:
    """Write everything into a new sibling of site.out, then swap it in (sitegen/swap.py: site.out is always the
    old site or the new one, whatever is killed when); on any failure the new folder is removed."""
    try:
        tmp = swap.staging(site.out)
    except OSError as e:   # e.g. a read-only parent folder
        raise BuildError([CourseError(f"{site.out}: cannot write the site into {site.out.parent} "
                                      f"({e.strerror or e})")]) from None
    try:
        shutil.copytree(site.root / "site" / "static", tmp / "static", dirs_exist_ok=True)
        minify.static_tree(tmp / "static")     # the shipping form of the site's own scripts and stylesheets
        for rel, content in {**site.pages, **site.files}.items():
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        for step in site.steps:
            step(site, tmp)
        swap.swap_in(tmp, site.out)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        problem = f"{e.filename or site.out}: cannot write the site ({e.strerror or e})"
        raise BuildError([CourseError(problem)]) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def install_runtime(site: Site, dest: Path) -> None:
    """Pyodide + numpy into dest/pyodide/<version>/; worker.js and this repo's experiments/ package into
    dest/py/<hash>/, the URLs the pages name (see sitegen/runtime.py); the unversioned static/js/worker.js goes."""
    from sitegen import runtime
    worker = site.root / "site" / "static" / "js" / "worker.js"
    runtime.install_site_runtime(dest, plan=runtime.plan_runtime(worker, ROOT / "experiments"))
    (dest / "static" / "js" / "worker.js").unlink(missing_ok=True)


def install_vendor(site: Site, dest: Path) -> None:
    """Plotly and its global CSS into dest/static/vendor/ (see sitegen/vendor.py)."""
    from sitegen.vendor import install_vendor as install
    install(dest)


def write_browser_models(site: Site, dest: Path) -> None:
    """dest/data/models.json: alias -> {id, name, config}, what the widgets' model pickers send to Python."""
    payload = {alias: {"id": mn.id, "name": mn.name, "config": mn.doc["config"]}
               for alias, mn in sorted(site.model_numbers.items())}
    path = dest / widget_renderers.MODELS_JSON
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(browser_json(payload), encoding="utf-8")   # (Infinity as 1e999: JSON.parse reads it)


def write_training_texts(site: Site, dest: Path) -> None:
    """dest/data/texts/*.txt: the course's training text(s), which the page's training worker fetches
    (lesson C5; source and licence in data/texts/*.meta.yaml)."""
    folder = site.root / "data" / "texts"
    for path in sorted(folder.glob("*.txt")) if folder.is_dir() else ():
        target = dest / "data" / "texts" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def write_browser_data(site: Site, dest: Path) -> None:
    """dest/data/<name>.json: each data document a page's widgets may send Python a part of (a {"$data": ...}
    placeholder in their build-time answers, experiments.widget.data_ref), fetched only when Python answers."""
    for target in sorted({f for lesson in site.lessons for f in lesson.fetches}):
        name = Path(target).stem
        path = dest / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(browser_json(site.data[name]), encoding="utf-8")


OUTPUT_STEPS += [install_runtime, install_vendor, write_browser_models, write_training_texts, write_browser_data]
OUTPUT_STEPS.append(write_offline)   # last: sw.js lists (and its version hashes) every file written before it


def report_changes(site: Site) -> None:
    for line in site.report:
        print(line)


# -- command line ----------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python build.py", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the course folder (default: this repo)")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: ROOT/_site)")
    parser.add_argument("--no-cache", action="store_true",
                        help="compute every widget answer, reading and writing no cached answer (.cache/answers/)")
    args = parser.parse_args(argv)
    out = args.out or args.root / "_site"
    try:
        site = build(args.root, out, cache=not args.no_cache)
    except CourseError as e:
        lines = e.lines()
        for line in lines:
            print(line, file=sys.stderr)
        print(f"build failed: {len(lines)} problem(s); {out} left unchanged", file=sys.stderr)
        return 1
    print(f"built {site.out}: {len(site.pages)} pages, {len(site.numbers or {})} numbers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
