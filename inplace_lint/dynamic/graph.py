"""``--graph OUT``: DOT drawings around each confirmed hazard.

Where the model traces with ``torch.fx`` (a subject that builds ``(model, inputs)``), the
drawing is the traced graph within two steps of the nodes on the hazard's line; otherwise it
is the evidence itself: the op that saved the tensor, the in-place write, the backward.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
from typing import Any

from inplace_lint.dynamic.report import Confirmed, Report
from inplace_lint.dynamic.sites import Site

__all__ = ["draw", "write_graphs"]

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_NUMBERS = itertools.count()


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _evidence_graph(item: Confirmed, name: str) -> str:
    where = f"{os.path.basename(item.site.path)}:{item.site.line}"
    saved = re.search(r"saved by (\S+)(?: at line (\d+))?", item.evidence)
    lines = [
        f"subgraph {_quote('cluster_' + name)} {{",
        f"label={_quote(item.code + ' ' + where)};",
    ]
    write = _quote(f"{name}_write")
    lines.append(f"{write} [label={_quote('in-place write ' + where)}, color=red];")
    if saved:
        label = f"{saved.group(1)} saved it" + (
            f" (line {saved.group(2)})" if saved.group(2) else ""
        )
        lines.append(f"{_quote(name + '_saved')} [label={_quote(label)}];")
        lines.append(f"{_quote(name + '_saved')} -> {write};")
    back = "backward raises" if item.kind == "raises" else "backward differs"
    lines.append(f"{_quote(name + '_bwd')} [label={_quote(back)}, shape=box];")
    lines.append(f"{write} -> {_quote(name + '_bwd')};")
    lines.append("}")
    return "\n".join(lines)


def _fx_graph(model: Any, item: Confirmed, name: str) -> str | None:
    import torch
    import torch.fx

    if not isinstance(model, torch.nn.Module):
        return None
    tracer = torch.fx.Tracer()
    tracer.record_stack_traces = True
    try:
        graph = tracer.trace(model)
    except Exception:
        return None
    hit = []
    for node in graph.nodes:
        for match in _FRAME.finditer(node.stack_trace or ""):
            if (
                os.path.abspath(match.group("file")) == item.site.path
                and int(match.group("line")) == item.site.line
            ):
                hit.append(node)
                break
    if not hit:
        return None
    keep = set(hit)
    for _ in range(2):
        for node in list(keep):
            keep.update(node.all_input_nodes)
            keep.update(node.users)
    lines = [f"subgraph {_quote('cluster_' + name)} {{"]
    where = f"{os.path.basename(item.site.path)}:{item.site.line}"
    lines.append(f"label={_quote(item.code + ' ' + where + ' (torch.fx)')};")
    for node in graph.nodes:
        if node not in keep:
            continue
        color = ", color=red" if node in hit else ""
        target = getattr(node.target, "__name__", node.target)
        label = f"{node.op}: {target}" if node.op != "placeholder" else f"input {node.name}"
        lines.append(f"{_quote(name + node.name)} [label={_quote(label)}{color}];")
        for user in node.users:
            if user in keep:
                lines.append(f"{_quote(name + node.name)} -> {_quote(name + user.name)};")
    lines.append("}")
    return "\n".join(lines)


def draw(subject: Any, confirmed: list[Confirmed]) -> dict[Site, str]:
    """One DOT subgraph per confirmed hazard."""
    model = None
    if confirmed:
        try:
            built = subject.build(None)
            model = built[0] if built else None
        except Exception:
            model = None
    drawings: dict[Site, str] = {}
    for item in confirmed:
        name = f"h{next(_NUMBERS)}_"  # unique across targets: one DOT file holds them all
        drawing = _fx_graph(model, item, name) if model is not None else None
        drawings[item.site] = drawing or _evidence_graph(item, name)
    return drawings


def write_graphs(reports: list[Report], out: str) -> str | None:
    """Write every report's drawings to ``out``; return a note for the user, if any."""
    parts = [d for report in reports for d in report.graphs.values()]
    body = "\n".join(parts) if parts else '"no confirmed hazard";'
    dot = "digraph inplace_lint {\nrankdir=LR;\nnode [shape=ellipse];\n" + body + "\n}\n"
    if out.endswith(".svg"):
        program = shutil.which("dot")
        if program is None:
            target = out[: -len(".svg")] + ".dot"
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(dot)
            return f"graphviz 'dot' not found; wrote DOT to {target} instead of SVG"
        subprocess.run([program, "-Tsvg", "-o", out], input=dot.encode(), check=True)
        return None
    with open(out, "w", encoding="utf-8") as handle:
        handle.write(dot)
    return None
