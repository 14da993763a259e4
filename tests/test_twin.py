"""The out-of-place twin: one before/after pair per rewrite, then line selection."""

from __future__ import annotations

import pytest

from inplace_lint.dynamic.twin import out_of_place_twin

GUARD = 'x = x.clone() if hasattr(x, "clone") else x; '

PAIRS: list[tuple[str, str, str]] = [
    # in-place methods as statements
    ("method statement", "x.add_(y)\n", "x = x.add(y)\n"),
    ("method without args", "x.relu_()\n", "x = x.relu()\n"),
    ("method on dotted name", "self.buf.mul_(2)\n", "self.buf = self.buf.mul(2)\n"),
    ("method keeps comment", "h.tanh_()  # note\n", "h = h.tanh()  # note\n"),
    ("method on an element", "x[0].add_(1)\n", GUARD + "x[0] = x[0].add(1)\n"),
    ("method on a view", "x.view(-1).add_(1)\n", "x = x.clone(); x.view(-1).add_(1)\n"),
    ("method on a call result", "f().mul_(2)\n", "f().mul(2)\n"),
    ("chain of in-place methods", "h.mul_(2).add_(1)\n", "h = h.mul(2).add(1)\n"),
    ("chain on a temporary", "h.add(1).mul_(3)\n", "h = h.clone(); h.add(1).mul_(3)\n"),
    ("chain on an element", "x[k].mul_(2).add_(1)\n", GUARD + "x[k] = x[k].mul(2).add(1)\n"),
    ("data attribute holding a list", "self.data = []\n", "self.data = []\n"),
    ("method with no out-of-place name", "x.zero_()\n", "x = x.clone().zero_()\n"),
    ("random fill", "x.normal_(0, 1)\n", "x = x.clone().normal_(0, 1)\n"),
    ("copy_", "x.copy_(y)\n", "x = x.where(x.new_zeros(x.shape).bool(), y.to(x))\n"),
    ("method in a one-line suite", "if c: x.add_(1); y += 2\n", "if c: x = x.add(1); y = y + 2\n"),
    # in-place methods whose result is used
    ("method as value", "y = x.add_(1)\n", "y = x.add(1)\n"),
    ("method returned", "def f(x):\n    return x.relu_()\n", "def f(x):\n    return x.relu()\n"),
    ("method as argument", "out = f(x.sigmoid_())\n", "out = f(x.sigmoid())\n"),
    ("method rebinding itself", "x = x.add_(y)\n", "x = x.add(y)\n"),
    # torch / F in-place functions
    ("torch function statement", "torch.relu_(x)\n", "x = torch.relu(x)\n"),
    ("F function statement", "F.relu_(x)\n", "x = F.relu(x)\n"),
    (
        "long functional path",
        "torch.nn.functional.relu_(x)\n",
        "x = torch.nn.functional.relu(x)\n",
    ),
    ("torch function as value", "y = torch.sigmoid_(x)\n", "y = torch.sigmoid(x)\n"),
    ("F function as value", "y = F.relu_(x)\n", "y = F.relu(x)\n"),
    ("torch.zero_", "torch.zero_(x)\n", "x = torch.zeros_like(x)\n"),
    # inplace=True
    (
        "inplace keyword, functional",
        "y = F.relu(x, inplace=True)\n",
        "y = F.relu(x, inplace=False)\n",
    ),
    ("inplace keyword, module", "act = nn.ReLU(inplace=True)\n", "act = nn.ReLU(inplace=False)\n"),
    (
        "inplace functional as statement",
        "F.relu(x, inplace=True)\n",
        "x = F.relu(x, inplace=False)\n",
    ),
    ("positional ReLU", "act = nn.ReLU(True)\n", "act = nn.ReLU(False)\n"),
    ("positional ReLU6", "act = nn.ReLU6(True)\n", "act = nn.ReLU6(False)\n"),
    ("positional Dropout", "drop = nn.Dropout(0.1, True)\n", "drop = nn.Dropout(0.1, False)\n"),
    ("positional LeakyReLU", "act = nn.LeakyReLU(0.2, True)\n", "act = nn.LeakyReLU(0.2, False)\n"),
    (
        "positional Hardtanh",
        "act = nn.Hardtanh(-1, 1, True)\n",
        "act = nn.Hardtanh(-1, 1, False)\n",
    ),
    ("positional F.relu", "y = F.relu(x, True)\n", "y = F.relu(x, False)\n"),
    (
        "positional F.leaky_relu",
        "y = F.leaky_relu(x, 0.2, True)\n",
        "y = F.leaky_relu(x, 0.2, False)\n",
    ),
    (
        "positional F.dropout",
        "y = F.dropout(x, 0.5, True, True)\n",
        "y = F.dropout(x, 0.5, True, False)\n",
    ),
    (
        "training flag is not inplace",
        "y = F.dropout(x, 0.5, True)\n",
        "y = F.dropout(x, 0.5, True)\n",
    ),
    (
        "inplace inside Sequential",
        "net = nn.Sequential(\n    nn.Sigmoid(),\n    nn.ReLU(inplace=True),\n)\n",
        "net = nn.Sequential(\n    nn.Sigmoid(),\n    nn.ReLU(inplace=False),\n)\n",
    ),
    # augmented assignment
    ("+=", "x += y\n", "x = x + y\n"),
    ("-= parenthesises", "x -= a + b\n", "x = x - (a + b)\n"),
    ("*= on attribute", "self.x *= 2\n", "self.x = self.x * 2\n"),
    ("/=", "x /= s\n", "x = x / s\n"),
    ("//= and %=", "x //= 2; x %= 3\n", "x = x // 2; x = x % 3\n"),
    ("**=", "x **= 2\n", "x = x ** 2\n"),
    ("bit operators", "m &= a; m |= b; m ^= c\n", "m = m & a; m = m | b; m = m ^ c\n"),
    ("shifts", "m <<= 1; m >>= 2\n", "m = m << 1; m = m >> 2\n"),
    ("@= is left alone", "x @= w\n", "x @= w\n"),
    ("augmented element", "x[i] += y\n", GUARD + "x[i] = x[i] + y\n"),
    # item assignment
    ("item assignment", "x[i] = v\n", GUARD + "x[i] = v\n"),
    (
        "item assignment on attribute",
        "self.buf[i] = v\n",
        'self.buf = self.buf.clone() if hasattr(self.buf, "clone") else self.buf; '
        "self.buf[i] = v\n",
    ),
    ("item assignment through .data", "x.data[i] = v\n", GUARD + "x.data[i] = v\n"),
    (
        "indented item assignment",
        "def f(x):\n    x[0] = 1\n    return x\n",
        "def f(x):\n    " + GUARD + "x[0] = 1\n    return x\n",
    ),
    # out=
    ("out= statement", "torch.add(a, b, out=c)\n", "c = torch.add(a, b)\n"),
    ("out= in the middle", "torch.add(a, out=c, alpha=2)\n", "c = torch.add(a, alpha=2)\n"),
    ("out= as value", "y = torch.add(a, b, out=c)\n", "y = torch.add(a, b)\n"),
    (
        "out= into an element",
        "torch.add(a, b, out=c[0])\n",
        'c = c.clone() if hasattr(c, "clone") else c; c[0] = torch.add(a, b)\n',
    ),
    # .data and .detach() writes
    (".data method", "x.data.mul_(2)\n", "x = x.mul(2)\n"),
    (".detach() method", "x.detach().mul_(2)\n", "x = x.mul(2)\n"),
    (".data copy_", "x.data.copy_(y)\n", "x = x.where(x.new_zeros(x.shape).bool(), y.to(x))\n"),
    (".data zero_", "x.data.zero_()\n", "x = x.clone().zero_()\n"),
    (".data augmented", "w.data -= lr * g\n", "w = w - (lr * g)\n"),
    (".data assignment", "x.data = y\n", "x = x.where(x.new_zeros(x.shape).bool(), y.to(x))\n"),
    # clamp as relu
    ("clamp(min=0)", "y = x.clamp(min=0)\n", "y = x.relu()\n"),
    ("clamp(0)", "y = x.clamp(0)\n", "y = x.relu()\n"),
    ("clamp_min(0)", "y = x.clamp_min(0)\n", "y = x.relu()\n"),
    ("clamp(min=0.0)", "y = x.clamp(min=0.0)\n", "y = x.relu()\n"),
    ("torch.clamp(x, min=0)", "y = torch.clamp(x, min=0)\n", "y = torch.relu(x)\n"),
    ("torch.clamp(x, 0)", "y = torch.clamp(x, 0)\n", "y = torch.relu(x)\n"),
    ("clamp_(min=0)", "x.clamp_(min=0)\n", "x = x.relu()\n"),
    ("clamp_(min=0) as value", "y = x.clamp_(min=0)\n", "y = x.relu()\n"),
    ("torch.clamp_(x, min=0)", "torch.clamp_(x, min=0)\n", "x = torch.relu(x)\n"),
    ("clamp_min_(0) on an element", "x[0].clamp_min_(0)\n", GUARD + "x[0] = x[0].relu()\n"),
    ("clamp with a max is kept", "y = x.clamp(0, 1)\n", "y = x.clamp(0, 1)\n"),
    ("clamp with another min is kept", "y = x.clamp(min=1e-6)\n", "y = x.clamp(min=1e-6)\n"),
    # not tensor writes
    ("requires_grad_", "x.requires_grad_()\n", "x.requires_grad_()\n"),
    ("nn.init", "nn.init.zeros_(w)\n", "nn.init.zeros_(w)\n"),
    ("torch.nn.init", "torch.nn.init.normal_(w, 0, 1)\n", "torch.nn.init.normal_(w, 0, 1)\n"),
    ("dunder", "x.__iadd__(y)\n", "x.__iadd__(y)\n"),
    ("out-of-place code", "y = x.add(1)\nz = F.relu(y)\n", "y = x.add(1)\nz = F.relu(y)\n"),
    # a shifted copy onto the same tensor copies the old values: from a clone
    ("overlapping shift", "h[..., 1:] = h[..., :-1]\n", "h[..., 1:] = h[..., :-1].clone()\n"),
]


@pytest.mark.parametrize(("before", "after"), [p[1:] for p in PAIRS], ids=[p[0] for p in PAIRS])
def test_rewrite(before: str, after: str) -> None:
    assert out_of_place_twin(before) == after


def test_only_chosen_lines_change() -> None:
    source = "a.add_(1)\nb.add_(1)\nc += 1\n"
    assert out_of_place_twin(source, lines={2}) == "a.add_(1)\nb = b.add(1)\nc += 1\n"
    assert out_of_place_twin(source, lines={1, 3}) == "a = a.add(1)\nb.add_(1)\nc = c + 1\n"
    assert out_of_place_twin(source, lines=set()) == source


def test_site_is_the_line_where_it_starts() -> None:
    source = "y = (x\n     .add_(1))\nz = F.relu(x,\n           inplace=True)\n"
    twin = out_of_place_twin(source, lines={1, 3})
    assert twin == "y = (x\n     .add(1))\nz = F.relu(x,\n           inplace=False)\n"


def test_line_numbers_are_kept() -> None:
    source = "import torch\n\nx[0].add_(1)\nx[1] = 2\ny = x * 2\n"
    twin = out_of_place_twin(source)
    assert len(twin.splitlines()) == len(source.splitlines())
    assert twin.splitlines()[4] == "y = x * 2"


def test_other_text_is_byte_identical() -> None:
    source = (
        "# header comment\n"
        "def f(x ,  y):  # odd spacing\n"
        "    '''Doc.'''\n"
        "    x.add_( y )\n"
        "    return   x\n"
    )
    expected = source.replace("x.add_( y )", "x = x.add( y )")
    assert out_of_place_twin(source) == expected


class TestCallSiteFallback:
    """A chosen line with nothing else to flip clones the first argument of a call."""

    def test_self_module_call(self) -> None:
        source = "def forward(self, out):\n    out = self.act(out)\n    return out\n"
        twin = out_of_place_twin(source, lines={2})
        assert twin == "def forward(self, out):\n    out = self.act(out.clone())\n    return out\n"

    def test_plain_name_call_parenthesises(self) -> None:
        assert out_of_place_twin("y = net(a + b)\n", lines={1}) == "y = net((a + b).clone())\n"

    def test_builtins_are_skipped(self) -> None:
        source = "print(x)\nn = len(x)\n"
        assert out_of_place_twin(source, lines={1, 2}) == source

    def test_not_used_when_something_matched(self) -> None:
        assert out_of_place_twin("y = net(x.relu_())\n", lines={1}) == "y = net(x.relu())\n"

    def test_not_used_for_every_line(self) -> None:
        assert out_of_place_twin("out = self.act(out)\n") == "out = self.act(out)\n"

    def test_no_positional_argument(self) -> None:
        assert out_of_place_twin("optD.step()\n", lines={1}) == "optD.step()\n"


def test_twin_runs_like_out_of_place_code() -> None:
    torch = pytest.importorskip("torch")
    source = (
        "import torch\n"
        "x = torch.tensor([-1.0, 2.0, -3.0])\n"
        "feats = [x.clone()]\n"
        "cache = {'h': x.clone()}\n"
        "y = x\n"
        "x.relu_()\n"
        "feats[0].mul_(2)\n"
        "cache['h'] += 1\n"
        "x[0] = 5.0\n"
    )
    namespace: dict[str, object] = {}
    exec(out_of_place_twin(source), namespace)
    assert torch.equal(namespace["y"], torch.tensor([-1.0, 2.0, -3.0]))
    assert torch.equal(namespace["x"], torch.tensor([5.0, 2.0, 0.0]))
    assert torch.equal(namespace["feats"][0], torch.tensor([-2.0, 4.0, -6.0]))
    assert torch.equal(namespace["cache"]["h"], torch.tensor([0.0, 3.0, -2.0]))
