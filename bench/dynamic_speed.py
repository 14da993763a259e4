"""Time the dynamic checker on timm models: plain forward+backward, pass A, full confirm.

    python bench/dynamic_speed.py [MODEL...]

Needs timm, which imports torchvision at import time::

    pip install torch==2.13.0 torchvision==0.28.0 timm==1.0.31

torchvision 0.28.0 is the release paired with torch 2.13.0; its PyPI wheel is built against
the CUDA torch, so on a CPU-only torch its native operators (nms, roi_align, ...) cannot load
and ``import torchvision`` stops while registering their meta and autograd kernels. None of
the five models calls those operators, so when that happens this script skips only those two
registration modules and says so; everything the models run is the real torch and timm code.
When timm cannot be imported at all the models are skipped with the reason.
``--small-resnet`` adds a torchvision-free ResNet-18 style network written here.

Then, per model, the figure the issue sets a target for: ``confirm`` on the target
``NAME.py::build`` next to a plain import + build + forward + backward, each a fresh process
(``bench/confirm_cost.py``, wall-clock and CPU time), and their ratio against the target of
at most 2x. ``--no-cost`` skips it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
import warnings
from typing import Any

import torch
from torch import nn

MODELS = {
    "resnet18": (2, 3, 128, 128),
    "efficientnet_b0": (2, 3, 128, 128),
    "mobilenetv3_small_100": (2, 3, 128, 128),
    "vit_tiny_patch16_224": (2, 3, 224, 224),
    "convnext_atto": (2, 3, 128, 128),
}


class Block(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.down is None else self.down(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


def small_resnet() -> nn.Module:
    layers: list[nn.Module] = [
        nn.Conv2d(3, 64, 7, 2, 3, bias=False),
        nn.BatchNorm2d(64),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(3, 2, 1),
    ]
    widths = [64, 128, 256, 512]
    cin = 64
    for index, width in enumerate(widths):
        stride = 1 if index == 0 else 2
        layers += [Block(cin, width, stride), Block(width, width, 1)]
        cin = width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000)]
    return nn.Sequential(*layers)


def _time(fn: Any, repeat: int = 3) -> float:
    fn()  # warm up
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def bench(name: str, build: Any, shape: tuple[int, ...]) -> None:
    from inplace_lint.dynamic import confirm
    from inplace_lint.dynamic.passa import Detector

    torch.manual_seed(0)
    model = build()
    x = torch.randn(*shape)

    def plain() -> None:
        model.zero_grad(set_to_none=True)
        model(x).sum().backward()

    def pass_a() -> None:
        with Detector():
            plain()

    base = _time(plain)
    with_a = _time(pass_a)
    start = time.perf_counter()
    report = confirm(model, x)
    full = time.perf_counter() - start
    reached = sum(s.status != "not reached" for s in report.statuses)
    print(
        f"{name:<24} fwd+bwd {base:6.3f}s  pass A {with_a:6.3f}s"
        f" ({(with_a / base - 1) * 100:+5.1f}%)"
        f"  confirm {full:6.2f}s ({full / base:5.1f}x)  confirmed {len(report.confirmed)}"
        f"  static findings {len(report.statuses)} ({reached} reached)"
    )
    for line in report.lines()[: len(report.confirmed)]:
        print("   ", line)


def import_timm() -> Any:
    """Import timm; tolerate a torchvision whose native operators cannot load (see above)."""
    try:
        import timm
    except RuntimeError as exc:
        if "torchvision::" not in str(exc):
            raise
        for name in [n for n in sys.modules if n == "torchvision" or n.startswith("torchvision.")]:
            del sys.modules[name]
        for name in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
            sys.modules[name] = types.ModuleType(name)
        print(f"note: torchvision native ops unavailable ({exc}); skipped their registrations")
        import timm
    return timm


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(MODELS))
    parser.add_argument("--small-resnet", action="store_true")
    parser.add_argument("--no-cost", action="store_true", help="skip the process-level ratio")
    ns = parser.parse_args()
    warnings.simplefilter("ignore")
    torch.set_num_threads(max(1, torch.get_num_threads()))
    if ns.small_resnet:
        bench("small_resnet (bench)", small_resnet, (2, 3, 128, 128))
    try:
        timm = import_timm()
    except Exception as exc:
        print(f"timm models skipped: cannot import timm: {type(exc).__name__}: {exc}")
        return 0
    for name in ns.models:
        bench(name, lambda name=name: timm.create_model(name, pretrained=False), MODELS[name])
    if not ns.no_cost:
        cost([f"timm/{name}" for name in ns.models])
    return 0


def cost(names: list[str], target: float = 2.0) -> None:
    """confirm against a plain import+forward+backward, fresh processes (confirm_cost.py)."""
    import tempfile
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import confirm_cost

    known = [name for name in names if name in confirm_cost.MODELS]
    with tempfile.TemporaryDirectory(prefix="confirm-cost-") as scratch:
        confirm_cost.write_targets(Path(scratch), known)
        for name in known:
            row = confirm_cost.measure(name, Path(scratch), str(confirm_cost.ROOT), 600)
            if "ratio_warm" not in row:
                print(f"{name:24} cost: {row.get('error')}")
                continue
            ratio = float(row["ratio_warm"])  # type: ignore[arg-type]
            cpu = float(row["cpu_ratio_warm"])  # type: ignore[arg-type]
            verdict = "met" if max(ratio, cpu) <= target else "NOT met"
            print(
                f"{name:24} import+fwd+bwd {row['plain_s']}s, confirm {row['confirm_warm_s']}s:"
                f" {ratio}x wall, {cpu}x CPU (target <= {target:g}x: {verdict})"
            )


if __name__ == "__main__":
    sys.exit(main())
