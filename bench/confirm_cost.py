"""What ``inplace-lint confirm`` costs on real models, next to a plain run of the same model.

    python bench/confirm_cost.py [MODEL...] [--code DIR] [--json OUT]

For each model a target file ``NAME.py`` with ``build()`` (returning the model and an example
input, built from code or a config: no weights are downloaded) is written to a scratch folder,
then two fresh processes are timed, wall clock, from their start:

- ``plain``: import the target, build, forward, ``loss.backward()`` (a seeded random
  projection of the float outputs, as the dynamic checker's default loss), torch alone;
- ``confirm``: ``check(subject_for("NAME.py::build"))`` of the inplace-lint at ``--code``
  (the working tree by default; a pristine checkout gives the "before" figure): cold (the
  static cache off, ``--no-cache``) and warm (the cache filled by an untimed run before).
  A checkout without the cache lints every file afresh both times.

It prints, per model, the wall-clock and CPU times (user + system of the process, all
threads: the steadier figure on a shared machine; every process runs torch on one thread,
``--threads``, since idle threads spin and bill CPU time on a loaded machine) and their
ratios, whether the report is clean, how many files confirm linted and how many statuses it
reported. Plain and warm are the fastest of ``--repeat`` runs. Models whose library
is missing are skipped with the reason. timm needs torchvision; see ``bench/dynamic_speed.py``
for the CPU-torch caveat that the target files work around the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: torch's intra-op threads for every process (``--threads``): idle threads of a busy shared
#: machine spin and bill CPU time that measures the load, not the work.
THREADS = "1"

#: Import timm on a CPU torch whose paired torchvision wheel cannot register its native ops.
PRELUDE = """\
import sys
import types

import torch


def _import(name):
    try:
        import torchvision  # noqa: F401  (timm and transformers import it)
    except ImportError:
        pass
    except RuntimeError as exc:
        if "torchvision::" not in str(exc):
            raise
        for key in [k for k in sys.modules if k == "torchvision" or k.startswith("torchvision.")]:
            del sys.modules[key]
        for key in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
            sys.modules[key] = types.ModuleType(key)
    return __import__(name)
"""

TIMM = "timm.create_model({name!r}, pretrained=False)"
TV = "getattr(__import__('torchvision.models').models, {name!r})(weights=None)"
MODELS: dict[str, tuple[str, str, str]] = {
    # name: (library, constructor expression, example input expression)
    "timm/resnet18": ("timm", TIMM.format(name="resnet18"), "torch.randn(2, 3, 128, 128)"),
    "timm/efficientnet_b0": (
        "timm",
        TIMM.format(name="efficientnet_b0"),
        "torch.randn(2, 3, 128, 128)",
    ),
    "timm/mobilenetv3_small_100": (
        "timm",
        TIMM.format(name="mobilenetv3_small_100"),
        "torch.randn(2, 3, 128, 128)",
    ),
    "timm/vit_tiny_patch16_224": (
        "timm",
        TIMM.format(name="vit_tiny_patch16_224"),
        "torch.randn(2, 3, 224, 224)",
    ),
    "timm/convnext_atto": (
        "timm",
        TIMM.format(name="convnext_atto"),
        "torch.randn(2, 3, 128, 128)",
    ),
    "torchvision/resnet18": (
        "torchvision",
        TV.format(name="resnet18"),
        "torch.randn(2, 3, 128, 128)",
    ),
    "torchvision/mobilenet_v2": (
        "torchvision",
        TV.format(name="mobilenet_v2"),
        "torch.randn(2, 3, 128, 128)",
    ),
    "torchvision/densenet121": (
        "torchvision",
        TV.format(name="densenet121"),
        "torch.randn(2, 3, 64, 64)",
    ),
    "transformers/bert_tiny": (
        "transformers",
        "__import__('transformers').BertModel(__import__('transformers').BertConfig("
        "vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,"
        " intermediate_size=128))",
        "{'input_ids': torch.randint(0, 1000, (2, 16))}",
    ),
    "transformers/gpt2_tiny": (
        "transformers",
        "__import__('transformers').GPT2Model(__import__('transformers').GPT2Config("
        "vocab_size=1000, n_embd=64, n_layer=2, n_head=2, n_positions=64,"
        " bos_token_id=0, eos_token_id=0, use_cache=False))",
        "{'input_ids': torch.randint(0, 1000, (2, 16))}",
    ),
}

TARGET = """\
{prelude}
{library} = _import({library!r})


def build():
    torch.manual_seed(0)
    model = {constructor}
    return model, {inputs}
"""

PLAIN = """\
import sys
sys.path.insert(0, {folder!r})
import torch
import {module} as target
model, inputs = target.build()
output = model(**inputs) if isinstance(inputs, dict) else model(inputs)
generator = torch.Generator().manual_seed(1234)
flat = output if isinstance(output, torch.Tensor) else [
    v for v in (output.values() if hasattr(output, "values") else output)
    if isinstance(v, torch.Tensor)
]
total = 0
for tensor in [flat] if isinstance(flat, torch.Tensor) else flat:
    if tensor.is_floating_point() and tensor.requires_grad:
        total = total + (tensor * torch.randn(tensor.shape, generator=generator)).sum()
total.backward()
"""

CONFIRM = """\
import inspect, json, sys
from inplace_lint.dynamic.core import check
from inplace_lint.dynamic.targets import subject_for
options = {{}}
if "cache" in inspect.signature(check).parameters:  # older checkouts lint without a cache
    options["cache"] = {cache}
report = check(subject_for({target!r}), **options)
print("RESULT " + json.dumps({{
    "confirmed": [c.line() for c in report.confirmed],
    "files": len(report.files),
    "statuses": len(report.statuses),
    "reached": sum(s.status != "not reached" for s in report.statuses),
}}))
"""


def _stem(name: str) -> str:
    return name.replace("/", "_")


def write_targets(folder: Path, names: list[str]) -> None:
    for name in names:
        library, constructor, inputs = MODELS[name]
        text = TARGET.format(
            prelude=PRELUDE, library=library, constructor=constructor, inputs=inputs
        )
        (folder / f"{_stem(name)}.py").write_text(text)


def _run(
    code: str, folder: Path, python_path: str, timeout: float
) -> tuple[float, float, str, int]:
    """Wall-clock and CPU seconds (user + system, all threads) of one fresh process."""
    env = dict(os.environ, PYTHONPATH=python_path, PYTHONWARNINGS="ignore", OMP_NUM_THREADS=THREADS)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-P", "-c", code],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        output, rc = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired:
        output, rc = "timeout", -1
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, output, rc


def available(library: str) -> str | None:
    """None if ``library`` imports here (through the prelude), else the reason it does not."""
    code = PRELUDE + f"\n_import({library!r})\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode == 0:
        return None
    return (done.stderr.strip().splitlines() or ["?"])[-1]


def measure(
    name: str, folder: Path, code: str, timeout: float, repeat: int = 2
) -> dict[str, object]:
    """One model's row: plain and warm are the fastest of ``repeat`` runs, cold one run."""
    stem = _stem(name)
    row: dict[str, object] = {"model": name}
    plain = [
        _run(PLAIN.format(folder=str(folder), module=stem), folder, str(ROOT), timeout)
        for _ in range(repeat)
    ]
    if plain[0][3] != 0:
        row["error"] = "plain run failed: " + plain[0][2].strip().splitlines()[-1]
        return row
    row["plain_s"] = round(min(p[0] for p in plain), 2)
    row["plain_cpu_s"] = round(min(p[1] for p in plain), 2)
    runs = [("cold", False), ("prime", True)] + [("warm", True)] * repeat
    for label, cache in runs:
        wall, cpu, output, rc = _run(
            CONFIRM.format(target=f"{stem}.py::build", cache=cache), folder, code, timeout
        )
        result = [line for line in output.splitlines() if line.startswith("RESULT ")]
        if not result:
            tail = output.strip().splitlines()[-1:] or ["no output"]
            row["error"] = f"confirm ({label}) failed, rc {rc}: {tail[0]}"
            return row
        if label == "prime":  # fills the static cache; not timed
            continue
        for key, value in ((f"confirm_{label}_s", wall), (f"confirm_{label}_cpu_s", cpu)):
            row[key] = round(min(value, float(row.get(key, value))), 2)  # type: ignore[arg-type]
        row.update(json.loads(result[0][len("RESULT ") :]))
    for label in ("cold", "warm"):
        row[f"ratio_{label}"] = round(float(row[f"confirm_{label}_s"]) / float(row["plain_s"]), 2)
        row[f"cpu_ratio_{label}"] = round(
            float(row[f"confirm_{label}_cpu_s"]) / float(row["plain_cpu_s"]), 2
        )
    row["load"] = round(os.getloadavg()[0], 1)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(MODELS))
    parser.add_argument("--code", default=str(ROOT), help="inplace-lint checkout to time")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--repeat", type=int, default=2, help="runs of plain and warm (2)")
    parser.add_argument("--threads", default="1", help="OMP_NUM_THREADS of every process (1)")
    ns = parser.parse_args()
    global THREADS
    THREADS = ns.threads
    rows = []
    reasons: dict[str, str | None] = {}
    with tempfile.TemporaryDirectory(prefix="confirm-cost-") as scratch:
        folder = Path(scratch)
        write_targets(folder, ns.models)
        for name in ns.models:
            library = MODELS[name][0]
            if library not in reasons:
                reasons[library] = available(library)
            if reasons[library] is not None:
                print(f"{name:30} skipped: {library} does not import: {reasons[library]}")
                rows.append({"model": name, "error": f"{library}: {reasons[library]}"})
                continue
            row = measure(name, folder, ns.code, ns.timeout, ns.repeat)
            rows.append(row)
            print(_line(row), flush=True)
    if ns.json:
        Path(ns.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def _line(row: dict[str, object]) -> str:
    if "ratio_warm" not in row:
        return f"{row['model']:30} {row.get('error')}"
    found = row["confirmed"]
    clean = f"CONFIRMED {len(found)}" if isinstance(found, list) and found else "clean"
    return (
        f"{row['model']:28} plain {row['plain_s']:5.1f}s cpu {row['plain_cpu_s']:5.1f}s"
        f" | confirm cold {row['confirm_cold_s']:5.1f}s ({row['ratio_cold']}x)"
        f" cpu {row['confirm_cold_cpu_s']:5.1f}s ({row['cpu_ratio_cold']}x)"
        f" | warm {row['confirm_warm_s']:5.1f}s ({row['ratio_warm']}x)"
        f" cpu {row['confirm_warm_cpu_s']:5.1f}s ({row['cpu_ratio_warm']}x)"
        f" | {clean}, files linted {row['files']}, statuses {row['statuses']}"
        f" ({row['reached']} reached), load {row['load']}"
    )


if __name__ == "__main__":
    sys.exit(main())
