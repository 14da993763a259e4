"""Generate ``inplace_lint/data/torch_ops.json`` by probing real torch autograd.

The static linter never imports torch. It reads the JSON table written by this script, which
calls torch ops on small example tensors (float inputs require grad and are non-leaf) and
inspects the autograd graph they build:

* ``saves``: the parameters (by name) and/or ``"result"`` whose tensors the graph saved for
  backward. A saved tensor counts when it shares storage with that input or output, since it
  then shares the version counter and writing it in place breaks ``backward()``; copies (e.g.
  the original ``self`` cloned by ``x.mul_(y)``) are not hazards and are not listed.
* ``saves_alone`` (present only when not empty): the saved inputs the graph keeps when that
  input alone needs grad (``gather``'s ``input``, a loss's ``input``); the others in ``saves``
  are kept only for another input's gradient (``mul`` keeps ``other`` for ``input``'s).
* ``view``: the result aliases the storage of the first tensor argument.
* ``multi_view`` (present only when true): the call returns several views of its input and
  autograd refuses an in-place write to any of them (``unbind``, ``chunk``, ``split``).
* ``inplace``: the call bumped the first argument's version counter (or changed its data).
* ``detached`` (present only when true): no recipe gave a result with autograd history,
  although its float inputs require grad (``x.new_tensor(v)``, ``argmax``, ``eq``).
* ``metadata_factories``: the factories whose result, from one seed, is the same for a tensor
  argument of one shape and dtype whatever its values (``zeros_like``, ``rand_like``).
* aliasing (``tools/opprobe/aliasing.py``), what the autofix needs to know that a rewrite
  changes nothing else: ``fresh_functions`` / ``fresh_methods`` never hand back an input's
  storage in any configuration probed (each recipe, each bool argument flipped, inputs
  already of the result's dtype); ``receiver_methods`` hand back at most their receiver's
  (``to``, ``contiguous``, ``view``); ``outofplace_twins``: in-place methods whose stem
  returns what they write, in new storage (``clamp_``; not ``eq_``, whose stem returns
  bools); ``fresh_modules`` / ``passing_modules``: ``torch.nn`` modules built without
  ``inplace`` whose forward hands back new storage / at most its input's (``Dropout`` in
  eval mode, ``Identity``); ``tensor_properties``: the Tensor data descriptors.
* modules: whether the graph of ``module(x, ...)`` saved ``x`` or the module's output, and
  for a module returning a tuple, ``outputs``: its length, and ``saved_outputs``: the
  positions of the outputs it saved (``nn.LSTM``'s ``out`` in ``out, (h, c)``);
  ``saves_parameters: false`` (present only then) where moving every parameter's version
  counter before backward (as an optimizer step does) leaves backward working
  (``nn.Embedding`` keeps its indices, not its weight).
  ``parameters``: the names of the module's own parameters as the probe built it (``weight``,
  ``bias``; ``in_proj_weight``; ``weight_ih_l0``), present only when it has some.
* functions and modules with an ``inplace`` parameter describe ``inplace=True`` and add
  ``*_out_of_place`` keys for the default. Dropout-like ops are probed in training mode.
* ``tensor_params`` (functions; present only when not empty): the positional parameters only
  a tensor may fill, where a Python float and a Python int in the recipe's tensor's place both
  raise (``TypeError``, or a Python wrapper's ``AttributeError``) with the recipe's other
  numbers given as tensors (``torch.norm``'s ``input``; not ``torch.pow``'s, as
  ``pow(2.0, e)`` works).
* ``params``: positional parameter names, from ``inspect.signature`` or the aten schema
  (``*name`` marks varargs; ``argN`` is used where no name could be found).
* ``max_args`` (methods, present only where torch says): the most positional arguments the
  method takes after its receiver, from a Python signature or the binding's own complaint
  when called with too many (``zero_``: 0, ``mul``: 1); absent for varargs, a leading int
  list (``view(2, 3)``) or a binding that names no count (``add_``'s deprecated forms).

Only the probing plan is written by hand (which callables to try and how to build example
arguments, in ``tools/opprobe/recipes.py``); every fact is observed from torch, and calls that
fail are skipped. The output is deterministic: each probe reseeds torch and every list is
sorted. The script imports only torch and the standard library.

Devices: ``--device cuda`` builds every example tensor and module on that device and adds
``device`` / ``device_info`` keys. Some ops save different tensors there (fused RNN cells,
cuDNN RNNs), and some crash the process, so off CPU the probes run isolated (``--isolate``):
in subprocess batches where a crash or a timeout costs only the probe that caused it, which
is recorded under ``skipped_probes``. ``tools/ops_by_device.py`` compares two tables.

Regenerate (from the repository root, with torch installed)::

    python tools/gen_torch_ops.py                # writes inplace_lint/data/torch_ops.json
    python tools/gen_torch_ops.py --output PATH  # writes somewhere else
    python tools/gen_torch_ops.py --check        # exit 1 if the file on disk is stale
    python tools/gen_torch_ops.py --device cuda --output cuda.json   # isolated batches
    python tools/gen_torch_ops.py --isolate --only LSTMCell,relu --output part.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parent
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

import torch  # noqa: E402
from opprobe import isolate, specs, units  # noqa: E402

DEFAULT_OUTPUT = TOOLS.parent / "inplace_lint" / "data" / "torch_ops.json"
Log = Callable[[str], None]


def device_info(device: str) -> dict[str, Any]:
    """What the table was probed on, beyond the device type."""
    info: dict[str, Any] = {"type": torch.device(device).type}
    if info["type"] == "cuda":
        try:
            info["name"] = torch.cuda.get_device_name(torch.device(device))
            info["cuda"] = torch.version.cuda
            info["cudnn"] = torch.backends.cudnn.version()
        except Exception as error:  # the facts are still worth writing
            info["error"] = str(error).splitlines()[0]
    return info


def generate(
    log: Log = lambda message: None,
    device: str = "cpu",
    only: list[str] | None = None,
    settings: isolate.Settings | None = None,
    detail: bool = False,
) -> dict[str, Any]:
    """Probe torch and return the whole table (in this process unless ``settings`` is given).

    ``only`` keeps the units it names (see ``units.select``); the table is then partial.
    ``detail`` adds a ``module_args`` section: which forward arguments each module saved.
    """
    specs.set_device(device)
    names = units.all_units(detail)
    if only is not None:
        names = units.select(names, only)
    if settings is None:
        results, skipped = units.run_in_process(names, log)
    else:
        results, skipped = isolate.run_isolated(names, settings, log)
    table = units.assemble(names, results, log)
    if specs.DEVICE.type != "cpu":
        table["device"] = specs.DEVICE.type
        table["device_info"] = device_info(device)
    if skipped:
        table["skipped_probes"] = skipped
    return table


def render(table: dict[str, Any]) -> str:
    """Serialise the table the way it is checked in."""
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


def _parser() -> argparse.ArgumentParser:
    jobs = min(8, os.cpu_count() or 1)
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add = parser.add_argument
    add("--output", type=Path, default=DEFAULT_OUTPUT, help="JSON file to write")
    add("--check", action="store_true", help="do not write; exit 1 if the file differs")
    add("--verbose", action="store_true", help="print progress to stderr")
    add("--device", default="cpu", help="device for example tensors and modules (cpu, cuda)")
    add(
        "--isolate",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="probe in subprocess batches (default: only off CPU)",
    )
    add("--jobs", type=int, default=jobs, help=f"worker processes at a time (default {jobs})")
    add("--batch-size", type=int, default=100, help="probes per worker process (default 100)")
    add("--probe-timeout", type=float, default=120.0, help="seconds one probe may take")
    add("--deadline", type=float, help="isolated runs: seconds after which no probe starts")
    add("--only", help="comma-separated names of the probes to run (a partial table)")
    add("--detail", action="store_true", help="add module_args (not in the shipped table)")
    add("--threads", type=int, default=0, help=argparse.SUPPRESS)
    add("--worker", type=Path, help=argparse.SUPPRESS)
    return parser


def _settings(options: argparse.Namespace) -> isolate.Settings | None:
    """Worker settings when the run is isolated, else None."""
    if options.isolate is False or (options.isolate is None and options.device == "cpu"):
        return None
    jobs = max(1, options.jobs)
    threads = max(1, (os.cpu_count() or 1) // jobs)
    command = [sys.executable, str(Path(__file__).resolve()), "--device", options.device]
    command += ["--threads", str(threads), "--worker"]
    deadline = None if options.deadline is None else time.monotonic() + options.deadline
    return isolate.Settings(
        command, jobs, options.batch_size, options.probe_timeout, deadline=deadline
    )


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = _parser()
    options = parser.parse_args(argv)
    if options.worker is not None:
        return isolate.worker_main(options.worker, options.device, options.threads)
    partial = options.only is not None or options.device != "cpu" or options.detail
    if options.check and partial:
        parser.error("--check compares the whole CPU table: drop --only, --device, --detail")
    if partial and not options.check and options.output.resolve() == DEFAULT_OUTPUT.resolve():
        parser.error("a partial or non-CPU table is not the shipped one: give --output")

    def log(message: str) -> None:
        if options.verbose:
            print(message, file=sys.stderr, flush=True)

    only = options.only.split(",") if options.only is not None else None
    try:
        table = generate(log, options.device, only, _settings(options), options.detail)
    except isolate.WorkerStartError as error:
        print(f"gen_torch_ops: no probe could run: {error}", file=sys.stderr)
        return 2
    text = render(table)
    if options.check:
        current = options.output.read_text() if options.output.exists() else None
        if current != text:
            print(f"{options.output} is out of date; run tools/gen_torch_ops.py", file=sys.stderr)
            return 1
        return 0
    options.output.parent.mkdir(parents=True, exist_ok=True)
    options.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
