"""The two writers: the report's items as one self-contained HTML page (figures embedded as
base64 PNG) and as Markdown (figures linked). Kept side by side so that a change to one shows
what the other needs."""
import base64
import html
import re

from .document import Bold, Heading, Link, Path


CSS = """body{font-family:sans-serif;max-width:1320px;margin:1.5em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:0.85em}
th,td{border:1px solid #bbb;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#eee}td.PASS{background:#d9f2d9}td.FAIL{background:#f7d4d4;font-weight:bold}td.na{color:#777}
table.runs td:nth-child(8),table.nodir td:nth-child(7){max-width:28em}
table.metrics td:nth-child(3){max-width:34em}table.machine td{overflow-wrap:anywhere;max-width:60em}
tr:target{outline:3px solid #e0a000}table.sweep{font-size:0.8em}td.num{white-space:nowrap}
div.verdict{border:2px solid #888;border-radius:6px;padding:0.3em 1em;margin:1em 0;background:#fafafa}
div.verdict.pass{border-color:#3a3}div.verdict.fail{border-color:#c33}
p.headline{font-size:1.25em;margin:0.4em 0}ul.contents li{margin:0.15em 0}
figure{margin:1em 0}img{max-width:100%}figcaption{font-size:0.9em;color:#555}code{background:#f3f3f3}"""


NUMBER = re.compile(r"-?[0-9.]+(e[-+]?[0-9]+)?( FAIL)?")


def html_cell(c):
    if isinstance(c, Link):
        return f'<td><a href="#{html.escape(c.anchor)}">{html.escape(c.text)}</a></td>'
    if isinstance(c, Path):
        return "<td>" + "/<wbr>".join(html.escape(part) for part in c.text.split("/")) + "</td>"
    if c in ("PASS", "FAIL"):
        return f'<td class="{c}">{html.escape(c)}</td>'
    if c == "n/a":
        return f'<td class="na">{html.escape(c)}</td>'
    return f"<td>{html.escape(str(c))}</td>"


def html_table(header, rows, meta=None):
    meta = meta or {}
    rows = meta.get("html_rows", rows)
    ids = meta.get("ids") or [None] * len(rows)
    if meta.get("groups"):
        head = "".join(f'<th colspan="{n}">{html.escape(g)}</th>' for g, n in meta["groups"])
        head += "</tr><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in meta["short"])
    else:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    def cell(c):
        if meta.get("numbers") and isinstance(c, str) and NUMBER.fullmatch(c):
            return f'<td class="num">{html.escape(c)}</td>'  # never broken at the exponent's minus
        return html_cell(c)
    body = "".join((f'<tr id="{html.escape(i)}">' if i else "<tr>") + "".join(cell(c) for c in row)
                   + "</tr>\n" for row, i in zip(rows, ids))
    css = f' class="{meta["class"]}"' if meta.get("class") else ""
    return f"<table{css}><thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table>\n"


def html_pieces(pieces):
    out = []
    for p in pieces:
        if isinstance(p, Link):
            out.append(f'<a href="#{html.escape(p.anchor)}">{html.escape(p.text)}</a>')
        elif isinstance(p, Bold):
            out.append(f"<b>{html.escape(p.text)}</b>")
        else:
            out.append(html.escape(str(p)))
    return "".join(out)


def html_blocks(content):
    parts = []
    for kind, body, css in content["blocks"]:
        cls = f' class="{css}"' if css else ""
        if kind == "p":
            parts.append(f"<p{cls}>{html_pieces(body)}</p>\n")
        else:
            parts.append(f"<ul{cls}>" + "".join(f"<li>{html_pieces(li)}</li>" for li in body) + "</ul>\n")
    if content.get("class"):
        return f'<div class="{content["class"]}">\n' + "".join(parts) + "</div>\n"
    return "".join(parts)


def render_html(items, generated):
    parts = ["<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>pbdlab report</title>",
             f"<style>{CSS}</style></head><body>\n<h1>pbdlab report</h1>\n<p>Generated {generated}.</p>\n"]
    for heading, kind, content in items:
        if heading:
            anchor = f' id="{html.escape(heading.anchor)}"' if isinstance(heading, Heading) else ""
            parts.append(f"<h2{anchor}>{html.escape(str(heading))}</h2>\n")
        if kind == "table":
            parts.append(html_table(*content))
        elif kind == "text":
            parts.append(f"<p>{html.escape(content)}</p>\n")
        elif kind == "blocks":
            parts.append(html_blocks(content))
        elif kind == "subheading":
            parts.append(f"<h3>{html.escape(content)}</h3>\n")
        else:
            if not content:
                parts.append("<p>No iteration data to plot.</p>\n")
            for f in content:
                data = base64.b64encode(f.png).decode("ascii")
                parts.append(f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(f.title)}">'
                             f"<figcaption>{html.escape(f.caption)} "
                             f'(<code>figures/{f.name}.svg</code>)</figcaption></figure>\n')
    parts.append("</body></html>\n")
    return "".join(parts)


def md_table(header, rows, meta=None):
    def cell(c):
        text = f"[{c.text}](#{c.anchor})" if isinstance(c, Link) else str(c)
        return text.replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def md_pieces(pieces):
    out = []
    for p in pieces:
        if isinstance(p, Link):
            out.append(f"[{p.text}](#{p.anchor})")
        elif isinstance(p, Bold):
            out.append(f"**{p.text}**")
        else:
            out.append(str(p))
    return "".join(out)


def md_blocks(content):
    parts = []
    for kind, body, _ in content["blocks"]:
        if kind == "p":
            parts.append(f"\n{md_pieces(body)}\n")
        else:
            parts.append("\n" + "".join(f"- {md_pieces(li)}\n" for li in body))
    return "".join(parts)


def render_markdown(items, generated):
    parts = [f"# pbdlab report\n\nGenerated {generated}.\n"]
    for heading, kind, content in items:
        if heading:
            anchor = f'<a id="{heading.anchor}"></a>\n\n' if isinstance(heading, Heading) else ""
            parts.append(f"\n{anchor}## {heading}\n")
        if kind == "table":
            parts.append("\n" + md_table(*content))
        elif kind == "text":
            parts.append(f"\n{content}\n")
        elif kind == "blocks":
            parts.append(md_blocks(content))
        elif kind == "subheading":
            parts.append(f"\n### {content}\n")
        else:
            if not content:
                parts.append("\nNo iteration data to plot.\n")
            for f in content:
                parts.append(f"\n![{f.title}](figures/{f.name}.png)\n\n{f.caption} "
                             f"([SVG](figures/{f.name}.svg))\n")
    return "".join(parts)
