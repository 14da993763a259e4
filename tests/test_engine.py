"""The engine on its own: decoding, hostile input, precedence and dataflow corner cases."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from inplace_lint.checks import all_rules
from inplace_lint.engine import MAX_DEPTH, lint_bytes, lint_source

ALL = frozenset(rule.code for rule in all_rules())


def codes(source: str) -> list[tuple[int, str]]:
    """(line, code) of every finding, all rules on."""
    return [(f.line, f.code) for f in lint_source(textwrap.dedent(source), "t.py", ALL)]


def test_static_path_never_imports_torch() -> None:
    script = textwrap.dedent(
        """
        import sys
        from inplace_lint.engine import lint_source
        found = lint_source(
            "import torch\\na = torch.randn(2, requires_grad=True)\\n"
            "x = a.sigmoid()\\nx.mul_(2)\\nx.sum().backward()\\n"
        )
        assert [f.code for f in found] == ["IPL001"], found
        assert "torch" not in sys.modules, "the static path imported torch"
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_nesting_beyond_the_bound_is_ipl999_not_a_crash() -> None:
    deep = "import torch\nx = torch.randn(3)\ny = " + "(" * 150 + "x" + ")" * 150 + "\n"
    assert codes(deep) == []
    chain = "import torch\nx = torch.randn(3)\ny = x" + " + x" * (MAX_DEPTH + 50) + "\ny.add_(1)\n"
    (finding,) = lint_source(chain, "t.py", ALL)
    assert finding.code == "IPL999" and "nested" in finding.message
    parens = "import torch\nx = torch.randn(3)\ny = " + "(" * 3000 + "x" + ")" * 3000
    parens += "\ny.add_(1)\n"
    (finding,) = lint_source(parens, "t.py", ALL)
    assert finding.code == "IPL999"


def test_decoding_follows_pep_263() -> None:
    hazard = "import torch\na = torch.randn(2, requires_grad=True)\nx = a.exp()\nx += 1\n"
    hazard += "x.sum().backward()  # caf\xe9\n"
    latin = ("# -*- coding: latin-1 -*-\n" + hazard).encode("latin-1")
    assert [f.code for f in lint_bytes(latin, "t.py", ALL)] == ["IPL001"]
    (bad,) = lint_bytes(hazard.encode("latin-1"), "t.py", ALL)
    assert bad.code == "IPL999" and "utf-8" in bad.message
    bom = b"\xef\xbb\xbf" + hazard.encode("utf-8")
    assert [f.line for f in lint_bytes(bom, "t.py", ALL)] == [4]
    (null,) = lint_bytes(b"import torch\nx = 1\x00\n", "t.py", ALL)
    assert null.code == "IPL999" and null.line == 2


def test_one_write_gets_one_code() -> None:
    # a view of a saved tensor written, then the base read again: the loud error wins
    found = codes(
        """
        import torch
        a = torch.randn(4, 2, requires_grad=True)
        boxes = a.sigmoid()
        col = boxes[:, 0]
        col.mul_(2.0)
        print(boxes.sum())
        boxes.sum().backward()
        """
    )
    assert found == [(6, "IPL001")]


def test_exclusive_branches_do_not_meet() -> None:
    assert (
        codes(
            """
            import torch
            import torch.nn as nn
            fc = nn.Linear(3, 3)
            def f(x, noisy):
                mask = torch.ones(3)
                h = fc(x)
                if noisy:
                    out = h.mul_(mask)
                else:
                    mask.mul_(2)
                    out = h * mask
                return out
            """
        )
        == []
    )


def test_loop_write_meets_save_from_previous_iteration() -> None:
    found = codes(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        acc = torch.zeros(3)
        outs = []
        for i in range(3):
            acc.add_(1.0)
            outs.append(acc * w)
        torch.stack(outs).sum().backward()
        """
    )
    assert found == [(7, "IPL001")]


def test_integers_lists_and_item_sums_are_not_tensors() -> None:
    assert (
        codes(
            """
            import torch
            def train(model, loader, opt):
                total, steps, history = 0.0, 0, []
                for xb, yb in loader:
                    loss = (model(xb) - yb).pow(2).mean()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    total += loss.item()
                    steps += 1
                    history += [loss.item()]
                return total / steps
            """
        )
        == []
    )


ENCODER = """
import torch
from torch import nn

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor):
        {line}
        return self.proj(hidden_states)
"""


def test_zeroing_padding_of_a_forward_argument_is_not_reported_without_a_caller() -> None:
    """Padding positions are not data; a caller here would still be judged at its call."""
    padding = "hidden_states[~attention_mask.bool()] = 0.0"
    assert codes(ENCODER.format(line=padding)) == []
    # SpecAugment-style masking of real frames, and any other value, are still reported
    for line in (
        "hidden_states[~time_mask] = 0.0",
        "hidden_states[~attention_mask] = 1.0",
        "hidden_states[attention_mask] = 0.0",
        "hidden_states += 1",
    ):
        assert codes(ENCODER.format(line=line)) == [(11, "IPL004")], line


def test_linting_many_files_keeps_nothing_alive() -> None:
    """Visitors made per call (and the trees their closures hold) die with the file."""
    import gc
    from pathlib import Path

    from inplace_lint.facts.walk import Walker

    def walker_classes() -> int:
        pending = list(Walker.__subclasses__())
        count = 0
        while pending:
            cls = pending.pop()
            count += 1
            pending.extend(cls.__subclasses__())
        return count

    examples = Path(__file__).resolve().parent.parent / "examples"
    texts = [p.read_text() for p in sorted(examples.glob("*.py"))]
    assert texts
    counts, rounds = [], []
    for _ in range(3):
        rounds.append([lint_source(text, "x.py") for text in texts])
        gc.collect()
        counts.append(walker_classes())
    assert counts[0] == counts[1] == counts[2], counts
    # every zoo file has findings, so each lint went through the whole pipeline, the same way
    assert all(rounds[0]) and rounds[0] == rounds[1] == rounds[2]


def test_an_epsilon_nudge_is_not_a_stale_read() -> None:
    """``edges[..., -1] += 1e-6`` read again through an alias differs only by rounding."""
    source = """
        import torch
        def bins(inputs, widths, reverse):
            edges = torch.cumsum(widths, dim=-1)
            other = edges * 2
            where = other if reverse else edges
            where[..., -1] {op}
            idx = torch.sum(inputs[..., None] >= where, dim=-1) - 1
            return edges.gather(-1, idx[..., None])
        """
    assert codes(source.format(op="+= 1e-6")) == []
    assert codes(source.format(op="-= 1e-7")) == []
    assert codes(source.format(op="+= 0.5")) == [(7, "IPL002")]
    assert codes(source.format(op="*= 1e-6")) == [(7, "IPL002")]


def test_replacing_a_whole_element_by_a_call_on_it_is_the_list_idiom() -> None:
    """``maps[k] = block(maps[k])`` on an argument: a list of feature maps, not a tensor row."""
    source = """
        import torch
        from torch import nn

        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

            def forward(self, feature_maps):
                for i, level in enumerate([0, 2]):
                    {line}
                return torch.cat(feature_maps, dim=1)
        """
    assert (
        codes(source.format(line="feature_maps[level] = self.blocks[i](feature_maps[level])")) == []
    )
    # a row of a tensor: the member Linear keeps the row it is given, which the store then
    # overwrites (the caller's backward fails; before members were known, only IPL004)
    row = "feature_maps[:, level] = self.blocks[i](feature_maps[:, level])"
    assert codes(source.format(line=row)) == [(12, "IPL001")]


def test_a_stand_in_built_like_the_tensor_on_the_other_arm_is_meant_to_share_its_writes() -> None:
    """``r_ts = ts`` on one arm, ``r_ts`` built from ``r`` exactly as ``ts`` was built from
    ``t`` on the other: in that mode r is t by design, so zeroing ``ts`` is meant for both."""
    source = """
        import torch

        @torch.no_grad()
        def sample(model, t, r, x, context, mean_velocity):
            ts = t.expand(x.shape[0]).unsqueeze(-1)
            ts = ts.repeat((1, x.shape[1]))
            if mean_velocity:
                {arm}
            else:
                r_ts = ts
            ts[:, :context] = 0
            return model(x, timestep=ts, r_timestep=r_ts)
        """
    mirror = "r_ts = r.expand(x.shape[0]).unsqueeze(-1); r_ts = r_ts.repeat((1, x.shape[1]))"
    assert codes(source.format(arm=mirror.replace("; ", "\n                "))) == []
    # built some other way, or from the written tensor itself: an alias whose old value matters
    other = "r_ts = r.expand(x.shape[0]).unsqueeze(-1)"
    assert codes(source.format(arm=other)) == [(12, "IPL002")]
    derived = "r_ts = ts.flip(0)"
    assert codes(source.format(arm=derived)) == [(12, "IPL002")]


def test_a_conditional_identity_is_still_a_stale_alias() -> None:
    """The ResNet shortcut bound on either arm (or by a conditional expression) keeps its
    old value only when it is not the tensor that ReLU then overwrites."""
    source = """
        import torch
        from torch import nn

        class Block(nn.Module):
            def forward(self, x):
                x = self.bn(self.conv(x))
                {binding}
                x.relu_()
                return self.conv2(x) + identity
        """
    for binding in (
        "identity = self.down(x) if self.down is not None else x",
        "identity = x\n                if self.down is not None: identity = self.down(x)",
        "if self.down is not None:\n                    identity = self.down(x)\n"
        "                else:\n                    identity = x",
    ):
        relu = 9 + binding.count("\n")
        assert codes(source.format(binding=binding)) == [(relu, "IPL002")], binding


def test_a_parameter_every_caller_fills_with_one_module_class_is_that_module() -> None:
    """``grad_cam(model, x)`` after ``model = SmallCNN()``: the features SmallCNN.forward
    returns carry its in-place ReLU into the grad call. Other callers, another class or a
    non-module at that position leave the parameter unknown (IPL002 at the write, as before)."""
    source = """
        import torch
        from torch import nn

        class SmallCNN(nn.Module):
            def forward(self, x):
                feats = self.conv(x)
                acts = feats.relu_()
                return self.fc(acts.mean((2, 3))), feats

        class Other(nn.Module):
            def forward(self, x):
                return x, x

        def grad_cam(model, images):
            logits, feats = model(images)
            return torch.autograd.grad(logits.sum(), feats)

        {calls}
        """
    one = "net = SmallCNN()\n        grad_cam(net, torch.randn(2, 3, 5, 5))"
    assert codes(source.format(calls=one)) == [(8, "IPL006")]
    keyword = "grad_cam(model=SmallCNN(), images=torch.randn(2, 3, 5, 5))"
    assert codes(source.format(calls=keyword)) == [(8, "IPL006")]
    for calls in (
        one + "\n        grad_cam(Other(), torch.randn(2, 3, 5, 5))",
        one + "\n        grad_cam(make_model(), torch.randn(2, 3, 5, 5))",
        "",
    ):
        assert codes(source.format(calls=calls)) == [(8, "IPL002")], calls


def test_gradients_require_grad_only_when_the_graph_is_created() -> None:
    """The gradient penalty's norm saves its result; with ``create_graph=True`` the penalty is
    differentiated again, so ``grad_norm.sub_(1)`` breaks that backward. Plain gradients are
    constants: writing them in place is safe."""
    source = """
        import torch

        def gradient_penalty(critic, real):
            interp = real.detach().requires_grad_(True)
            scores = critic(interp)
            {unpack} = torch.autograd.grad(scores.sum(), interp{create})
            grad_norm = grads.norm(2, dim=1)
            grad_norm.sub_(1.0)
            return grad_norm.pow(2).mean()
        """
    for unpack in ("(grads,)", "grads, *_"):
        assert codes(source.format(unpack=unpack, create=", create_graph=True")) == [(9, "IPL001")]
    assert codes(source.format(unpack="(grads,)", create=", None, True, True")) == [(9, "IPL001")]
    assert codes(source.format(unpack="(grads,)", create="")) == []
    assert codes(source.format(unpack="(grads,)", create=", create_graph=False")) == []


def test_a_saved_input_that_is_also_the_grad_target_gets_both_codes() -> None:
    """``x_adv.clamp_()`` after the model saved it, then ``autograd.grad(loss, x_adv)``: torch
    raises that x_adv was not used in the graph (IPL006), and any other backward through the
    graph meets the overwritten input (IPL001)."""
    source = """
        import torch
        from torch import nn
        model = nn.Linear(6, 3)
        x_adv = torch.rand(4, 6) + torch.zeros(4, 6).requires_grad_(True)
        loss = model(x_adv).sum()
        x_adv.clamp_(0.0, 1.0)
        (g,) = torch.autograd.grad(loss, x_adv)
        """
    assert codes(source) == [(7, "IPL001"), (7, "IPL006")]


def test_a_list_attribute_holds_what_a_method_appends() -> None:
    """``self.cache_k = []`` in __init__, ``self.cache_k.append(k)``, then ``k.mul_()``: the
    cache read afterwards sees the scaled key. A clone appended, or the append after the write,
    is fine."""
    source = """
        import torch
        from torch import nn

        class Cached(nn.Module):
            def __init__(self):
                super().__init__()
                self.k_proj = nn.Linear(4, 4)
                self.cache_k = []

            def forward(self, x):
                k = self.k_proj(x)
                {append}
                k.mul_(0.5)
                keys = torch.cat(self.cache_k, dim=1)
                return keys.sum() + k.sum()
        """
    assert codes(source.format(append="self.cache_k.append(k)")) == [(14, "IPL002")]
    assert codes(source.format(append="self.cache_k.append(k.clone())")) == []
    after = source.replace("                k.mul_(0.5)\n", "").replace(
        "{append}", "k.mul_(0.5)\n                self.cache_k.append(k)"
    )
    assert codes(after) == []


def test_advanced_indexing_of_an_unannotated_argument_is_a_copy() -> None:
    """``shuffled = images[perm]`` gathers a copy whether or not ``images`` is known to be a
    tensor, so scaling ``images`` in place afterwards leaves ``shuffled`` as it was."""
    source = """
        import torch

        def mix(images, lam):
            perm = torch.randperm(images.size(0))
            shuffled = {index}
            images.mul_(lam)
            return images + shuffled

        batch = torch.randn(4, 3)
        out = mix(batch.clone(), 0.5)
        """
    assert codes(source.format(index="images[perm]")) == []
    assert codes(source.format(index="images[1:]")) == [(7, "IPL002")]
