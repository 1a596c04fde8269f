"""The stylesheets use colours only through design tokens (site/static/css/course.css + widgets.css).

The rule (from the issue: widgets.css hard-coded light colours that course.css then patched for dark mode):
- a colour literal (#hex, rgb()/hsl()/… functions, a CSS named colour such as white or black) may appear only as
  the value of a custom-property definition (`--name: …`), never in an ordinary declaration;
- the dark theme (@media (prefers-color-scheme: dark)) only redefines tokens on :root, and every token it
  redefines exists in the light :root, so dark mode needs no patch rules;
- every var(--x) either file reads is defined, and every token defined is read somewhere (no dead tokens).
`transparent` and `currentColor` are allowed: they name no hue, so there is nothing for a theme to change.

The parser below is deliberately small (comments and strings blanked, then split at { } ;) because the two files
are plain CSS: rules, @media blocks, declarations. Its own behaviour is checked on small snippets at the end.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

CSS_DIR = Path(__file__).resolve().parent.parent / "site" / "static" / "css"
FILES = ("course.css", "widgets.css")   # in the order base.html links them

# CSS Color Module Level 4 named colours (the 148 keywords, grey/gray spellings included).
NAMED_COLOURS = frozenset("""
aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue blueviolet brown burlywood
cadetblue chartreuse chocolate coral cornflowerblue cornsilk crimson cyan darkblue darkcyan darkgoldenrod darkgray
darkgreen darkgrey darkkhaki darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen
darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue dimgray dimgrey dodgerblue
firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite gold goldenrod gray green greenyellow grey honeydew
hotpink indianred indigo ivory khaki lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan
lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen lightskyblue lightslategray
lightslategrey lightsteelblue lightyellow lime limegreen linen magenta maroon mediumaquamarine mediumblue
mediumorchid mediumpurple mediumseagreen mediumslateblue mediumspringgreen mediumturquoise mediumvioletred
midnightblue mintcream mistyrose moccasin navajowhite navy oldlace olive olivedrab orange orangered orchid
palegoldenrod palegreen paleturquoise palevioletred papayawhip peru pink plum powderblue purple rebeccapurple red
rosybrown royalblue saddlebrown salmon sandybrown seagreen seashell sienna silver skyblue slateblue slategray
slategrey snow springgreen steelblue tan teal thistle tomato turquoise violet wheat white whitesmoke yellow
yellowgreen
""".split())
# system colours depend on the browser's theme, not the course's tokens
SYSTEM_COLOURS = frozenset("""canvas canvastext linktext visitedtext activetext buttonface buttontext buttonborder
field fieldtext highlight highlighttext selecteditem selecteditemtext mark marktext graytext accentcolor
accentcolortext""".split())
HEX = re.compile(r"#[0-9a-fA-F]{3,8}\b")
COLOUR_FUNCTION = re.compile(r"\b(rgba?|hsla?|hwb|lab|lch|oklab|oklch|color|color-mix|light-dark)\s*\(", re.I)
IDENT = re.compile(r"(?<![\w-])-{0,2}[a-zA-Z_][\w-]*")
VAR = re.compile(r"var\(\s*(--[\w-]+)")
COMMENT = re.compile(r"/\*.*?\*/", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')


def declarations(css: str) -> list[tuple[tuple[str, ...], str, str]]:
    """Every declaration as (enclosing preludes outermost first, e.g. ('@media …', ':root'), property, value)."""
    text = STRING.sub('""', COMMENT.sub(" ", css))
    out, stack, chunk = [], [], ""

    def flush():
        nonlocal chunk
        if chunk.strip():
            assert stack and ":" in chunk, f"not a declaration: {chunk.strip()!r} in {stack}"
            prop, value = chunk.split(":", 1)
            out.append((tuple(stack), prop.strip().lower() if not prop.strip().startswith("--") else prop.strip(),
                        value.strip()))
        chunk = ""

    for piece in re.split(r"([{};])", text):
        if piece == "{":
            stack.append(" ".join(chunk.split()))
            chunk = ""
        elif piece == "}":
            flush()
            assert stack, "unbalanced }"
            stack.pop()
        elif piece == ";":
            flush()
        else:
            chunk += piece
    assert not stack and not chunk.strip(), f"unclosed block {stack}"
    return out


def colour_literals(value: str) -> list[str]:
    """The colour literals written in one declaration's value."""
    value = STRING.sub('""', value)
    found = HEX.findall(value) + [m.group(0).rstrip("( ") for m in COLOUR_FUNCTION.finditer(value)]
    found += [w for w in IDENT.findall(value)
              if not w.startswith("-") and w.lower() in NAMED_COLOURS | SYSTEM_COLOURS]
    return found


def problems(sheets: dict[str, str]) -> list[str]:
    """Every breach of the token rule across the given stylesheets, one line each (empty when clean)."""
    bad, defined, light, used = [], {}, set(), {}
    for name, css in sheets.items():
        for context, prop, value in declarations(css):
            where = f"{name}: {' > '.join(context)} {{ {prop}: {value} }}"
            dark = any("prefers-color-scheme" in c and "dark" in c for c in context)
            for var in VAR.findall(value):
                used.setdefault(var, where)
            if prop.startswith("--"):
                defined.setdefault(prop, where)
                if not any(c.startswith("@") for c in context) and context[-1] == ":root":
                    light.add(prop)
                if dark and context[-1] != ":root":
                    bad.append(f"{where}: the dark theme defines tokens on :root only")
                continue
            if dark:
                bad.append(f"{where}: a dark-theme patch rule; redefine a token on :root instead")
            for literal in colour_literals(value):
                bad.append(f"{where}: colour literal {literal} outside a token definition")
        for context, prop, _value in declarations(css):
            if prop.startswith("--") and any("prefers-color-scheme" in c for c in context) and prop not in light:
                bad.append(f"{name}: the dark theme sets {prop}, which the light :root does not define")
    bad += [f"{where}: var({var}) is never defined" for var, where in used.items() if var not in defined]
    bad += [f"{where}: token {var} is never read" for var, where in defined.items() if var not in used]
    return bad


def _sheets() -> dict[str, str]:
    return {name: (CSS_DIR / name).read_text(encoding="utf-8") for name in FILES}


# -- the real stylesheets ----------------------------------------------------------------------------------------
def test_colours_only_through_tokens_and_every_token_defined_and_read():
    assert problems(_sheets()) == []


def test_the_sheets_are_parsed_in_full():
    """The checks above see the real rules: known declarations of both files come out of the parser."""
    found = {name: declarations(css) for name, css in _sheets().items()}
    course = {(c[-1], p): v for c, p, v in found["course.css"] if not any(x.startswith("@") for x in c)}
    dark = {p: v for c, p, v in found["course.css"] if any("prefers-color-scheme: dark" in x for x in c)}
    widgets = {(c[-1], p): v for c, p, v in found["widgets.css"] if not any(x.startswith("@") for x in c)}
    assert course[(":root", "--bg")] == "#fdfcf9" and dark["--bg"] == "#15171a"
    assert course[("body", "background")] == "var(--bg)"
    assert widgets[(".check-bad", "color")] == "var(--error)"
    assert widgets[('.widget button[aria-pressed=""]', "color")] == "var(--on-accent)"
    assert len(found["course.css"]) > 150 and len(found["widgets.css"]) > 100


def test_no_rule_for_markup_nothing_produces():
    """The live-view switch (.widget[data-live], .widget-live) and short charts (data-height) are gone: no template,
    script or build module writes them."""
    text = "".join(_sheets().values())
    for dead in ("data-live", "widget-live", "data-height"):
        assert dead not in text


# -- the checker itself ------------------------------------------------------------------------------------------
ROOT = (":root { --fg: #111; --bg: white; }\n"
        "@media (prefers-color-scheme: dark) { :root { --fg: #eee; --bg: black; } }\n")


@pytest.mark.parametrize("rule, complaint", [
    (".a { color: #fff; }", "colour literal #fff"),
    (".a { border: 1px solid #0b5cad; }", "colour literal #0b5cad"),
    (".a { box-shadow: 0 4px 18px rgb(0 0 0 / 0.18); }", "colour literal rgb"),
    (".a { background: hsla(0, 0%, 0%, .5); }", "colour literal hsla"),
    (".a { color: White; }", "colour literal White"),
    (".a { outline: 2px solid black; }", "colour literal black"),
    (".a { background: var(--panel, #f8fafc); color: var(--fg); }", "colour literal #f8fafc"),
    (".a { color: var(--missing); }", "var(--missing) is never defined"),
    ("@media (prefers-color-scheme: dark) { .a { color: var(--fg); } }", "a dark-theme patch rule"),
    ("@media (prefers-color-scheme: dark) { .a { --fg: #000; } }", "defines tokens on :root only"),
    ("@media (prefers-color-scheme: dark) { :root { --new: #000; } }", "which the light :root does not define"),
    (":root { --unused: #123456; }", "token --unused is never read"),
])
def test_checker_flags(rule, complaint):
    found = problems({"a.css": ROOT + ".b { color: var(--fg); background: var(--bg); }\n" + rule})
    assert any(complaint in line for line in found), found


def test_checker_passes_tokens_keywords_and_lookalikes():
    css = ROOT + """
    .b { color: var(--fg); background: var(--bg); border: 1px solid currentColor; border-color: transparent; }
    .tan, .red-button, #abc { font-family: "Snow Sans", monospace; grid-area: navy-a; }
    @media print { :root { --fg: #000; } .b { color: inherit; } }
    """
    assert problems({"a.css": css}) == []


def test_parser_handles_nesting_strings_and_a_last_declaration_without_semicolon():
    css = '/* a } comment; */ @media print { .x[data-a="{;}"] { color: red } }  .y { --t: #fff; margin: 0 }'
    assert declarations(css) == [(("@media print", '.x[data-a=""]'), "color", "red"),
                                 ((".y",), "--t", "#fff"), ((".y",), "margin", "0")]
