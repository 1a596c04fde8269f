"""What each lesson widget shows, as plain JSON-ready data, computed from one ledger.

The build renders these into HTML (templates/); the browser calls the very same functions through
experiments.api under Pyodide and writes the returned strings into the same places (site/static/js/widgets.js).
Every string a learner reads - counts, shares, shapes, ratios, error messages - is formatted here, in Python, so
build-time and in-browser pages cannot differ in a digit. Chart specs carry raw numbers for plotting and the
formatted hover texts.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, cast

from ...errors import ConfigError, Problem
from ...format import format_value, n, shape_str, share, signed
from ...labels import PART_ZH, layer_label
from ...ledger import Ledger, views
from ...toolkit.config_text import parse_config_text
from ...toolkit.derivations import derivations
from ...widget import model_ref, uses


# -- 总账 -------------------------------------------------------------------------------------------------------
def ledger_total(ledger: Ledger, name: str = "") -> dict:
    """总账: every part with its share of the whole checkpoint and (text parts only) of the text backbone."""
    parts = views.breakdown(ledger)
    rows = []
    for key, count in parts.items():
        in_text = key not in ("mtp", "vision")
        rows.append({"key": key, "label": PART_ZH.get(key, key), "count": n(count),
                     "share_total": share(count, ledger.total),
                     "share_backbone": share(count, ledger.text_backbone) if in_text else "—"})
    chart = {"kind": "bar", "labels": [r["label"] for r in rows], "values": list(parts.values()),
             "hover": [f"{r['label']}：{r['count']}（{r['share_total']}）" for r in rows],
             "title": f"{name} 各部件参数" if name else "各部件参数"}
    return {"rows": rows, "total": n(ledger.total), "text_backbone": n(ledger.text_backbone),
            "ffn": n(ledger.ffn), "ffn_share_total": share(ledger.ffn, ledger.total),
            "ffn_share_backbone": share(ledger.ffn, ledger.text_backbone),
            "active_per_token": n(ledger.active_per_token), "has_extras": ledger.total != ledger.text_backbone,
            "chart": chart}


# -- 一层里 -------------------------------------------------------------------------------------------------------
def _layer_rows(node) -> list[dict]:
    """One copy of a layer group, tensor by tensor; tensors inside a repeated group (routed experts) say how
    many copies one layer holds."""
    rows = []

    def go(x, prefix, mult):
        for c in x.children:
            name = f"{prefix}{c.name}"
            if c.shape is not None:
                copies = mult * c.n
                shape = " × ".join(str(s) for s in c.shape)   # no digit groups inside a shape
                rows.append({"name": name, "shape": f"{copies} × ({shape})" if copies > 1 else shape,
                             "count": n(copies * c.per_copy)})
            else:
                go(c, name + ".", mult * c.n)
    go(node, "", 1)
    return rows


def _layer_split(ledger: Ledger, layer_type: str) -> dict:
    """One layer of a type: token mixer, FFN, norms (and the rest) as ints; they sum to the layer."""
    node = ledger.layer(layer_type)
    mixer = views.mixer_per_layer(ledger, layer_type)
    ffn = node.sum_where(lambda leaf, kinds: "ffn" in kinds) // node.n
    return {"node": node, "mixer": mixer, "ffn": ffn, "other": node.per_copy - mixer - ffn}


def ledger_layer(ledger: Ledger) -> dict:
    """一层里: one layer of each type, tensor by tensor, and the difference between the first two types, part by
    part (token mixer, FFN, norms, the whole layer)."""
    layers, splits = [], []
    for lt in ledger.layer_types:
        s = _layer_split(ledger, lt)
        node = s["node"]
        splits.append(s)
        layers.append({"type": lt, "label": layer_label(lt), "n": node.n, "per_layer": n(node.per_copy),
                       "mixer": n(s["mixer"]), "ffn": n(s["ffn"]), "other": n(s["other"]),
                       "ffn_share": share(s["ffn"], node.per_copy), "rows": _layer_rows(node)})
    diff = None
    if len(layers) >= 2:
        (a, sa), (b, sb) = (layers[0], splits[0]), (layers[1], splits[1])
        parts = [("token mixer", "mixer"), ("FFN", "ffn"), ("归一化等", "other")]
        rows = [{"label": label, "a": n(sa[k]), "b": n(sb[k]), "diff": signed(sa[k] - sb[k])} for label, k in parts]
        total_a, total_b = sa["node"].per_copy, sb["node"].per_copy
        rows.append({"label": "本层合计", "a": n(total_a), "b": n(total_b), "diff": signed(total_a - total_b)})
        gap = total_a - total_b
        verb = "多" if gap > 0 else "少" if gap < 0 else "一样多"
        diff = {"a": a["label"], "b": b["label"], "rows": rows, "layer": n(abs(gap)), "verb": verb,
                "mixer": signed(sa["mixer"] - sb["mixer"]), "ffn": signed(sa["ffn"] - sb["ffn"]),
                "sentence": (f"一层{a['label']}和一层{b['label']}参数一样多。" if gap == 0 else
                             f"一层{a['label']}比一层{b['label']}{verb} {n(abs(gap))} 个参数"
                             f"（token mixer {signed(sa['mixer'] - sb['mixer'])}，"
                             f"FFN {signed(sa['ffn'] - sb['ffn'])}）。")}
    return {"layers": layers, "diff": diff,
            "single": None if diff else f"这个模型只有一种层：{layers[0]['label']} ×{layers[0]['n']}。"}


# -- 三个模型并排 ---------------------------------------------------------------------------------------------------
def ledger_compare(models: list[tuple[str, str, Ledger]]) -> dict:
    """三个模型并排: the same purpose categories for several models, counts and shares of each model's total."""
    keys: list[str] = []
    per = []
    for alias, name, ledger in models:
        parts = views.breakdown(ledger)
        for k in parts:
            if k not in keys:
                keys.append(k)
        per.append((alias, name, ledger, parts))
    rows: list[dict[str, Any]] = [
        {"key": k, "label": PART_ZH.get(k, k),
         "cells": [{"count": n(parts.get(k, 0)), "share": share(parts.get(k, 0), ledger.total)}
                   for _, _, ledger, parts in per]} for k in keys]
    cols = [{"alias": alias, "name": name, "total": n(ledger.total), "ffn_share": share(ledger.ffn, ledger.total),
             "shares": [float(Fraction(parts.get(k, 0), ledger.total)) for k in keys]}
            for alias, name, ledger, parts in per]
    labels = [PART_ZH.get(k, k) for k in keys]
    names = [c["name"] for c in cols]   # a model in two columns: two bars, each named by its column
    series = [f"{name}（第 {j + 1} 列）" if names.count(name) > 1 else name for j, name in enumerate(names)]
    chart = {"kind": "stacked", "labels": labels, "series": series,
             "values": [c["shares"] for c in cols],
             "hover": [[f"{series[j]} · {labels[i]}：{row['cells'][j]['count']}（{row['cells'][j]['share']}）"
                        for i, row in enumerate(rows)] for j, c in enumerate(cols)],
             "title": "各部件占全部参数的比例"}
    return {"rows": rows, "cols": cols, "keys": keys, "labels": labels, "chart": chart}


# -- 参数 ≠ 计算 ---------------------------------------------------------------------------------------------------
def log_points(t_max: int, per_decade: int = 12) -> list[int]:
    """Context lengths from 1 to t_max, evenly spaced in log10 (ints, strictly increasing, t_max included)."""
    out: list[int] = []
    i = 0
    while True:
        t = int(round(10 ** (i / per_decade)))
        if t >= t_max:
            break
        if not out or t > out[-1]:
            out.append(t)
        i += 1
    return out + [t_max]


def crossover_at(ledger: Ledger, T: int) -> dict:
    """The crossover widget's readout for one context length T."""
    ffn = views.ffn_flops_per_token(ledger)
    att = views.attention_score_flops(ledger, T)
    ratio = format_value(Fraction(att, ffn), "x2") if ffn else "—"      # a state-space model has no FFN
    return {"T": n(T), "ffn": n(ffn), "attention": n(att), "ratio": ratio,
            "attention_wins": att > ffn}


def crossover_series(ledger: Ledger, t_max: int | None = None, name: str = "") -> dict:
    """FFN vs attention-score FLOPs per generated token as context grows, the crossover and the ratio at t_max
    (the model's native context unless given)."""
    t_max = t_max or ledger.arch.context_length or 1      # Mamba's configs state no context length
    ts = log_points(t_max)
    ffn = views.ffn_flops_per_token(ledger)
    cross = views.crossover_T(ledger)
    attention = [views.attention_score_flops(ledger, t) for t in ts]
    at_max = attention[-1]
    cross_text = None if cross is None else n(round(cross))
    ratio = format_value(Fraction(at_max, ffn), "x") if ffn else "—"
    chart = {"kind": "crossover", "T": ts, "ffn": [ffn] * len(ts), "attention": attention,
             "hover_ffn": [f"T = {n(t)}：FFN {n(ffn)} FLOPs" for t in ts],
             "hover_attention": [f"T = {n(t)}：全注意力打分 {n(a)} FLOPs" for t, a in zip(ts, attention)],
             "crossover": None if cross is None else float(cross),
             "crossover_label": cross_text and f"交叉点 T = {cross_text}",
             "t_max": t_max, "ratio_label": f"T = {n(t_max)}：{ratio} 倍", "title": name}
    if cross is None:
        point = "这个模型没有随上下文线性增长的全注意力层：打分计算不会追上 FFN。"
    else:
        point = (f"交叉点 T = {cross_text}（{ledger.arch.n_full} 个全注意力层；上下文每长一个 token，它们多做 "
                 f"{n(views.score_flops_per_context_token(ledger))} FLOPs）")
    return {"T": ts, "ffn": [ffn] * len(ts), "attention": attention,
            "ffn_flops": n(ffn), "per_T": n(views.score_flops_per_context_token(ledger)),
            "crossover": cross_text, "crossover_exact": cross is not None and cross.denominator == 1,
            "crossover_point": point,
            "t_max": n(t_max), "t_max_raw": t_max, "ratio_at_t_max": ratio,
            "native": (f"在原生上下文 T = {n(t_max)} 处，全注意力打分是 FFN 的 {ratio} 倍。"
                       if ffn else "这个模型的层里没有 FFN（每层只有一个状态空间混合器），这个比值无从谈起。"),
            "at_max": crossover_at(ledger, t_max),
            "n_full": ledger.arch.n_full, "n_layers": ledger.arch.n_layers, "chart": chart}


# -- the data-flow tracker -----------------------------------------------------------------------------------------
STATUS_FALLBACK = {"sliding_attention": "full_attention", "full_attention_dense": "full_attention",
                   "full_attention_moe": "full_attention"}


def tracker_stages(ledger: Ledger, tracker: dict, reference: dict | None = None,
                   course_titles: bool = True) -> list[dict]:
    """The data-flow tracker: text -> tokens -> embedding -> each layer type -> final norm -> lm_head -> softmax,
    with shapes for the example's T tokens, parameters per stage and ✓ where transformers' count agrees
    (data/reference_counts.json). Each layer stage also splits its parameters into token mixer, FFN and norms;
    the FFN part carries the course status of the "ffn" stage in data/course.json. A stage's status follows from
    the chapters that teach it and where they stand in the outline (stage_status). The stage titles there describe
    the course's anchor model ("门控全注意力层", "最终 RMSNorm"); for another model pass course_titles=False."""
    reference = reference or {}
    a = ledger.arch
    T = len(tracker.get("example_tokens", [])) or 1
    d, V = a.d_model, a.vocab_size
    status = {s["id"]: s for s in tracker.get("stages", [])}
    legend = tracker.get("status_legend", {})

    def check(key, value):
        if key not in reference:
            return None
        return "✓" if reference[key] == value else "✗"

    chapters = tracker.get("chapter_links", {})

    def course_status(sid, title):
        s = status.get(sid) or status.get(STATUS_FALLBACK.get(sid, ""), {})
        taught = s.get("chapters", [])
        st, chapter = stage_status(taught, tracker.get("chapter", ""), chapters)
        links = [{"id": c, "title": chapters[c]["title"], "href": chapters[c]["href"]} for c in taught if c in chapters]
        return {"title": s.get("title", title) if course_titles and sid in status else title, "status": st,
                "status_zh": legend.get(st, ""), "chapter": chapter, "solves": s.get("solves", ""),
                "links": links}

    def stage(sid, title, shape_in, shape_out, params, ref_key=None, n_layers=1, note="", parts=None):
        return {"id": sid, **course_status(sid, title), "in": shape_in, "out": shape_out, "params": n(params),
                "n_layers": n_layers, "check": check(ref_key, params) if ref_key else None, "note": note,
                "parts": parts or []}

    emb = ledger.root.find("text/embedding").count
    stages = [stage("tokens", "分词", "文本", shape_str([T]), 0),
              stage("embedding", "embedding 查表", shape_str([T]), shape_str([T, d]), emb, "embedding")]
    ffn_status = course_status("ffn", "FFN")
    for lt in ledger.layer_types:
        s = _layer_split(ledger, lt)
        parts = [{"label": "token mixer", "params": n(s["mixer"]),
                  "status": "", "status_zh": "", "solves": "", "links": []},
                 {"label": ffn_status["title"], "params": n(s["ffn"]), "status": ffn_status["status"],
                  "status_zh": ffn_status["status_zh"], "solves": ffn_status["solves"], "links": ffn_status["links"]},
                 {"label": "归一化等", "params": n(s["other"]),
                  "status": "", "status_zh": "", "solves": "", "links": []}]
        stages.append(stage(lt, layer_label(lt), shape_str([T, d]), shape_str([T, d]), s["node"].per_copy,
                            f"layer.{lt}", s["node"].n, parts=parts))
    final = sum(c.count for c in ledger.root.find("text").children if c.kind == "norm")
    stages.append(stage("final_norm", "最终归一化", shape_str([T, d]), shape_str([T, d]), final, "final_norm"))
    head = ledger.part("text/lm_head")
    stages.append(stage("lm_head", "lm_head", shape_str([T, d]), shape_str([T, V]), head.count if head else 0,
                        "lm_head", note="" if head else "与 embedding 共享同一个矩阵，不另算参数"))
    stages.append(stage("softmax", "softmax", shape_str([T, V]), shape_str([V]), 0,
                        note="只取最后一个位置：下一个 token 的概率"))
    return stages


def stage_status(taught: list[str], here: str, chapters: dict) -> tuple[str, str]:
    """(status, chapter) of a tracker stage shown in chapter `here`, from the chapters that teach it (chapters:
    chapter_links, in outline order): "new" when `here` teaches it; else, by the last teaching chapter before
    `here` in the outline, "learned" if that chapter is written and "planned" if it is not; else "later", by the
    first teaching chapter after `here`. A stage counts as learned only where an earlier written chapter teaches
    it. A chapter the outline lacks (its lesson removed) is passed over; ("", "") when none is left."""
    order = list(chapters)
    if here in taught:
        return "new", here
    taught = [c for c in taught if c in order]
    if here not in order or not taught:
        return "", ""
    before = [c for c in taught if order.index(c) < order.index(here)]
    if before:
        last = max(before, key=order.index)
        return ("learned" if chapters[last].get("href") else "planned"), last
    after = [c for c in taught if order.index(c) > order.index(here)]
    return ("later", min(after, key=order.index)) if after else ("", "")


def tracker_actual(stages: list[dict], forward_stages: list) -> dict:
    """Match the numpy forward pass's stage shapes (experiments.baseline.summary()["stages"]) to the tracker's
    stages: stage id -> {actual, match}. Decoder layers all map to the one layer stage."""
    actual: dict[str, list[str]] = {}
    layer_ids = [s["id"] for s in stages if s.get("parts")]
    for name, shape in forward_stages:
        sid = layer_ids[0] if name.startswith("layer ") and layer_ids else name
        actual.setdefault(sid, []).append(shape_str(shape))
    out = {}
    for s in stages:
        shapes = actual.get(s["id"])
        if not shapes:
            continue
        same = all(x == shapes[0] for x in shapes)
        text = shapes[0] if len(shapes) == 1 else (f"{shapes[0]} ×{len(shapes)} 层" if same else " / ".join(shapes))
        out[s["id"]] = {"actual": text, "match": same and shapes[0] == s["out"]}
    return out


def baseline_view(summary: dict, stages: list[dict] | None = None) -> dict:
    """The numpy baseline's run (experiments.baseline.summary()) as display strings; with the tracker's stages
    (for the baseline config) also which stage each output belongs to."""
    out = {"arrays": str(summary["arrays"]), "params": n(summary["params"]), "engine": n(summary["engine"]),
           "agrees": summary["params"] == summary["engine"],
           "token_ids": ", ".join(str(t) for t in summary["token_ids"]),
           "stages": [{"name": name, "shape": shape_str(shape)} for name, shape in summary["stages"]]}
    last = out["stages"][-1]["shape"]
    out["status"] = f"浏览器里跑完：{out['params']} 个参数，最后一步输出 {last}。"
    if stages is not None:
        out["actual"] = tracker_actual(stages, summary["stages"])
    return out


# -- bring your own config -----------------------------------------------------------------------------------------
def byo_error(error: Exception) -> dict:
    """An inline error for the bring-your-own-config box: a Chinese heading and one Chinese line per problem
    (experiments/errors_zh.py); any other error is one Chinese line, never an exception class name."""
    from ...errors_zh import learner_message
    if isinstance(error, ConfigError):
        lines = error.lines_zh()
        title = f"这个 config 有 {len(lines)} 处问题：" if len(lines) > 1 else "这个 config 有问题："
        return {"ok": False, "title": title, "problems": lines}
    return {"ok": False, "title": "无法计算这个 config：", "problems": [learner_message(error)]}


# -- build-time views: (options, data) -> the values templates/<template> shows ----------------------
def chapter_links(course: dict) -> dict:
    """Chapter id -> {title, href}: href is the lesson's page for a chapter data/course.json marks written (the
    build fails if its lesson is missing), None for a planned one."""
    return {ch["id"]: {"title": ch.get("title") or "",
                       "href": f"{ch['lesson']}.html" if ch.get("status") == "written" and ch.get("lesson") else None}
            for ch in course.get("chapters", []) if isinstance(ch, dict) and "id" in ch}


def tracker_settings(course: dict) -> dict:
    """data/course.json's tracker settings with the chapter links its stages need (the browser's recomputation
    gets the same dictionary)."""
    return {**course["tracker"], "chapter_links": chapter_links(course)}


def tracker_view(o: dict, data) -> dict:
    alias, mn = data.model(o["model"])
    settings = tracker_settings(data.course)
    reference = data.reference_counts
    models = [data.model(a, key="models") for a in dict.fromkeys([alias, *o["models"]])]
    stages = tracker_stages(mn.ledger, settings, reference.get(mn.id, {}), mn.id == settings.get("model"))
    state = {"settings": settings, "reference": {a: reference.get(m.id, {}) for a, m in models},
             "course_titles": [a for a, m in models if m.id == settings.get("model")],
             "baseline": "baseline" if "baseline" in dict(models) else None}
    shown = {x["status"] for s in stages for x in [s, *s["parts"]]}   # the legend names only the statuses in use
    legend = {k: zh for k, zh in settings.get("status_legend", {}).items() if k in shown}
    return {"alias": alias, "model": mn, "stages": stages, "tracker": settings, "models": models, "data": state,
            "later": later_links(settings, data.course), "legend": legend}


def later_links(tracker: dict, course: dict) -> list[dict]:
    """The tracker's stages left for a later chapter whose lesson is written, then the training stages that come
    after the forward pass (data/course.json tracker.training_stages: not drawn as stages, only linked):
    {title, chapter, chapter_title, href} (the page links each one under the stage list)."""
    chapters = {c["id"]: c for c in course.get("chapters", [])}
    links = chapter_links(course)
    out = []
    for s in tracker.get("stages", []) + tracker.get("training_stages", []):
        status, chapter = stage_status(s.get("chapters") or [], tracker.get("chapter", ""), links)
        ch = chapters.get(chapter)
        if status == "later" and ch and links[chapter]["href"]:
            out.append({"title": s["title"], "chapter": chapter, "chapter_title": ch.get("title", ""),
                        "href": links[chapter]["href"]})
    return out


def classic_gap_view(o: dict, data) -> dict:
    from ...labels import gap_label
    alias, mn = data.model(o["model"])
    items = [(gap_label(name), value) for name, value in views.classic_gap(mn.ledger)]
    return {"alias": alias, "model": mn, "items": items, "classic": views.classic_estimate(mn.ledger),
            "total": mn.ledger.total}


def ledger_total_view(o: dict, data) -> dict:
    alias, mn = data.model(o["model"])
    return {"alias": alias, "model": mn, "data": ledger_total(mn.ledger, mn.name), "choices": data.choices()}


def ledger_layer_view(o: dict, data) -> dict:
    alias, mn = data.model(o["model"])
    return {"alias": alias, "model": mn, "data": ledger_layer(mn.ledger), "choices": data.choices()}


def ledger_compare_view(o: dict, data) -> dict:
    models = [data.model(a, key="models") for a in o["models"]]
    return {"data": ledger_compare([(a, mn.name, mn.ledger) for a, mn in models]), "aliases": list(o["models"]),
            "choices": data.choices()}


def evolution_view(o: dict, data) -> dict:
    return {"table": link_chapter_mentions(data.evolution, chapter_links(data.course))}


def link_chapter_mentions(value, links: dict):
    """The evolution table with each mention of a written chapter ("C8") made a Markdown link to its page (the
    cells are rendered as Markdown); a planned or absent chapter stays plain text."""
    import re
    if isinstance(value, dict):
        return {k: link_chapter_mentions(v, links) for k, v in value.items()}
    if isinstance(value, list):
        return [link_chapter_mentions(v, links) for v in value]
    if not isinstance(value, str):
        return value

    def link(m):
        href = (links.get(m.group(1)) or {}).get("href")
        return f"[{m.group(1)}]({href})" if href else m.group(1)
    return re.sub(r"(?<![\w\[])(C\d+\+?)(?![\w+])", link, value)


def crossover_view(o: dict, data) -> dict:
    alias, mn = data.model(o["model"])
    return {"alias": alias, "model": mn, "data": crossover_series(mn.ledger, name=mn.name), "choices": data.choices()}


def baseline_widget_view(o: dict, data) -> dict:
    from ...baseline import summary
    alias, mn = data.model(o["model"])
    return {"alias": alias, "model": mn, "view": baseline_view(summary())}


def byo_config_view(o: dict, data) -> dict:
    alias, mn = data.model(o["example"], key="example")
    for a in o["compare"]:
        data.model(a, key="compare")
    compare = list(dict.fromkeys([*o["compare"], alias]))
    return {"example": alias, "model": mn, "compare": compare, "limits": byo_limits()}


def byo_limits() -> dict:
    """The box's bounds (experiments/ledger/jsontext.py), for script.js to refuse a text at once, on the
    page's thread, without reading it into the box or sending it to Python: the limits, and the Chinese lines
    Python gives for the same problems, with {n} where the size or depth goes."""
    from ...ledger import jsontext
    hole = 987_654_321
    big = cast(Problem, jsontext.size_problem(hole + jsontext.MAX_CONFIG_BYTES + 1)).zh()   # (over the limit)
    deep = Problem("", f"JSON nested at most {jsontext.MAX_JSON_DEPTH} levels deep (this one nests "
                       f"{hole:,} levels)").zh()
    hole_text = f"{hole:,}"
    return {"max_bytes": jsontext.MAX_CONFIG_BYTES, "max_depth": jsontext.MAX_JSON_DEPTH,
            "too_big": big.replace(f"{hole + jsontext.MAX_CONFIG_BYTES + 1:,}", "{n}"),
            "too_deep": deep.replace(hole_text, "{n}")}


# -- browser entry points (experiments.api:NAME): normal Python arguments in, JSON-ready data out ---------------------
def _ledger(config):
    from ...ledger import ledger_of
    return ledger_of(config)


def _context_length(T) -> int:
    if isinstance(T, bool) or not isinstance(T, int) or T < 1:
        raise ValueError(f"上下文长度 T 需要是正整数，得到 {T!r}")
    return T


def views_of(ledger, name: str = "") -> dict:
    """The three ledgers and the crossover of one model, as the widgets show them."""
    return {"model_type": ledger.arch.family, "total": f"{ledger.total:,}",
            "ledger_total": ledger_total(ledger, name), "ledger_layer": ledger_layer(ledger),
            "crossover": crossover_series(ledger, name=name)}


def ledger_views_call(config, name: str = "") -> dict:
    """The three ledgers and the crossover of one model (model pickers)."""
    return views_of(_ledger(config), name or "")


def total_view_call(config, name: str = "") -> dict:
    return ledger_total(_ledger(config), name or "")


def layer_view_call(config) -> dict:
    return ledger_layer(_ledger(config))


def ledger_compare_call(models) -> dict:
    """[[alias, name, config], ...] -> the side-by-side ledger."""
    return ledger_compare([(alias, name, _ledger(cfg)) for alias, name, cfg in models])


def crossover_at_call(config, T) -> dict:
    return crossover_at(_ledger(config), _context_length(T))


def crossover_view_call(config, name: str = "", T=None) -> dict:
    """The crossover widget for one model: series, crossover, ratio at the native context, and the readout `at`
    for min(T, native context), or for the native context when T is None (a model change is one round trip)."""
    ledger = _ledger(config)
    view = crossover_series(ledger, name=name or "")
    t_max = view["t_max_raw"]
    view["at"] = crossover_at(ledger, t_max if T is None else min(_context_length(T), t_max))
    for key in ("T", "ffn", "attention"):   # the chart carries the series; the page needs them once
        view.pop(key)
    return view


def tracker_call(config, settings=None, reference=None, titles=True) -> list[dict]:
    """The data-flow tracker's stages for a model (titles: the stage titles of data/course.json, which describe
    the anchor model)."""
    return tracker_stages(_ledger(config), settings or {}, reference or {}, bool(titles))


@uses("numpy")
def baseline_forward_call(seed=0, settings=None) -> dict:
    """The numpy baseline's parameter count and each stage's output shape for the 5-token example (with the
    tracker settings, also matched to the tracker's stages)."""
    from ...baseline import CONFIG, summary
    s = summary(seed or 0)
    stages = tracker_stages(_ledger(CONFIG), settings, course_titles=False) if settings else None
    return {**baseline_view(s, stages), "summary": s}


@uses("numpy")
def baseline_prepare_call(seed=0) -> dict:
    """Initialise the baseline's weights now (cached), so baseline_forward only runs the forward pass."""
    from ...baseline import count_params, initialised
    return {"params": count_params(initialised(seed or 0))}


BYO_NUMBERS = ("model.total", "model.ffn_share_total", "model.ffn_share_backbone", "model.crossover_T")


def estimate_note(ledger) -> str:
    """One Chinese paragraph for a ledger built by the generic decoder reading (experiments/ledger/estimate.py):
    that it is an estimate, what was assumed, which keys were not read; empty for a family the engine knows."""
    if not ledger.estimate:
        return ""
    unread = ledger.estimate["unread_keys"]
    return ("这是估计值：本课程还不认识 model_type「" + str(ledger.arch.family) + "」，下面的账按通用解码器读出，"
            "没有和 transformers 核对过。假设：" + "；".join(ledger.estimate["assumed"]) + "。"
            + ("没有读取的键：" + "、".join(unread) + "（它们可能改变参数量）。" if unread
               else "config 里可能影响参数量的键都读过了。"))


def denominator_rows(ledger) -> dict:
    """数字口径: what each figure of the pasted model counts, one row per figure (views.denominators)."""
    f = views.denominators(ledger)
    rows = [{"label": "checkpoint 里的全部张量", "count": n(f["checkpoint"]),
             "note": "文本主干 + MTP 层 + 视觉塔 + 缓冲区：下载下来的权重文件装的就是这些"},
            {"label": "其中 MTP 层", "count": n(f["mtp"]),
             "note": "多 token 预测层：checkpoint 里有，transformers 不构建" if f["mtp"] else "这个模型没有"},
            {"label": "其中缓冲区（buffer）", "count": n(f["buffers"]),
             "note": "如 MoE 路由的 e_score_correction_bias：存在 checkpoint 里，但 transformers 当缓冲区而不是参数"
             if f["buffers"] else "这个模型没有"},
            {"label": "transformers 的参数", "count": n(f["transformers"]),
             "note": "sum(p.numel() for p in model.parameters())：全部张量减去 MTP 层和缓冲区"},
            {"label": "文本主干", "count": n(f["text_backbone"]), "note": "去掉视觉塔和 MTP 层的语言模型"},
            {"label": "每个 token 激活", "count": n(f["active"]),
             "note": "一个 token 实际经过的文本参数（路由专家只算选中的 top-k），含词嵌入表"},
            {"label": "每个 token 激活（不含词嵌入表）", "count": n(f["active_without_embedding"]),
             "note": "有的实验室公布的激活参数不含词嵌入表"}]
    return {"rows": rows}


def byo_views_call(text, others=None) -> dict:
    """[config text, [[alias, name, config], ...]] -> {ok: true, the three ledgers (the pasted model side by side
    with the given ones) and the crossover} or {ok: false, title, problems} naming what is wrong."""
    try:
        config = parse_config_text(text)
        ledger = _ledger(config)
    except Exception as e:  # noqa: BLE001 - whatever a strange config triggers is shown inline, in Chinese
        return byo_error(e)
    out = views_of(ledger, "你的模型")
    out["estimate_note"] = estimate_note(ledger)
    out["denominators"] = denominator_rows(ledger)
    out["compare"] = ledger_compare([(a, name, _ledger(cfg)) for a, name, cfg in others or []]
                                    + [("byo", "你的模型", ledger)])
    try:
        # an estimate has nothing it was checked against: no derivation with a ✓
        out["numbers"] = {} if ledger.estimate else derivations(config, BYO_NUMBERS)
    except Exception:  # noqa: BLE001 - a popover is an extra; never fail the whole result for it
        out["numbers"] = {}
    return {"ok": True, **out}


# -- what the build answers ahead of time (experiments.widget.Widget.states): the calls of the enumerable controls --
def _pick_calls(name: str, data, *extra) -> list:
    """One call per model of the pickers: (name, [that model's config, *extra(alias, model)])."""
    return [(name, [model_ref(a), *(f(a, mn) for f in extra)]) for a, mn in data.choices()]


def ledger_total_states(o: dict, data) -> list:
    return _pick_calls("total_view", data, lambda a, mn: mn.name)


def ledger_layer_states(o: dict, data) -> list:
    return _pick_calls("layer_view", data)


def crossover_states(o: dict, data) -> list:
    return _pick_calls("crossover_view", data, lambda a, mn: mn.name, lambda a, mn: None)


def ledger_compare_states(o: dict, data) -> list:
    """Each column set to each model, the other columns as built (neighbours of the first state, not the product)."""
    first = list(o["models"])
    out = []
    for i in range(len(first)):
        for a, _ in data.choices():
            chosen = first[:i] + [a] + first[i + 1:]
            out.append(("ledger_compare", [[[x, data.models[x].name, model_ref(x)] for x in chosen]]))
    return out


def tracker_states(o: dict, data) -> list:
    view = tracker_view(o, data)["data"]
    return [("tracker", [model_ref(a), view["settings"], view["reference"][a], a in view["course_titles"]])
            for a, _ in tracker_view(o, data)["models"]]
