"""What one instance of a same-file class gives the code that uses it, from the eighteenth
session's measurements. A forward that saves its output on one arm only (``if self.relued: x =
self.relu(x)``) returns a saved tensor for the instances built to take that arm (round 22's
GFDN GCN, round 9's GANet ConvModule and UTRNet Conv); ``self.D(x)`` calls a module rather
than building one, so what ``self.forward(x)`` stores from it is a graph the methods after it
differentiate (round 26's DR-GAN); a method called on the file's one instance of its class
takes its backward passes and optimizer steps there, and ``model.backward(...)`` is the
class's own method (round 26's SliceGAN). Every program is run with torch.
"""

from __future__ import annotations

from programs import behave, codes

CONFIGURED = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Conv(nn.Module):
    def __init__(self, ch, relued=True, norm=None):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.relu = nn.ReLU()
        self.relued = relued
        self.norm = nn.BatchNorm2d(ch) if norm == "bn" else None

    def forward(self, x, act=True):
        x = self.conv(x)
        if self.norm is not None:
            x = self.norm(x)
        if self.relued and act:
            x = self.relu(x)
        return x


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Conv(4{args})

    def forward(self, x):
        identity = x
        y = self.first(x{call})
        y += identity
        return y


out = Block()(torch.randn(1, 4, 5, 5))
out.sum().backward()
"""


def test_an_instance_built_to_take_the_saving_arm_returns_a_saved_output() -> None:
    hazard = CONFIGURED.format(args="", call="")
    assert codes(hazard) == [(33, "IPL001")]
    assert codes(CONFIGURED.format(args=', norm="bn"', call="")) == [(33, "IPL001")]
    for safe_args, safe_call in ((", relued=False", ""), ("", ", act=False"), (", False", "")):
        safe = CONFIGURED.format(args=safe_args, call=safe_call)
        assert codes(safe) == []
        behave(hazard, safe)


LISTED = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, cin, cout, with_act=True):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1)
        self.activate = nn.ReLU() if with_act else None

    def forward(self, x):
        x = self.conv(x)
        if self.activate is not None:
            x = self.activate(x)
        return x


class FPN(nn.Module):
    def __init__(self, channels=(2, 3, 4)):
        super().__init__()
        self.lateral_convs = nn.ModuleList()
        for c in channels:
            self.lateral_convs.append(ConvModule(c, 4{args}))

    def forward(self, inputs):
        laterals = [conv(inputs[i]) for i, conv in enumerate(self.lateral_convs)]
        for i in range(len(laterals) - 1, 0, -1):
            laterals[i - 1] += laterals[i]
        return sum(lateral.sum() for lateral in laterals)


fpn = FPN()
fpn([torch.randn(1, c, 3, 3) for c in (2, 3, 4)]).backward()
"""


def test_the_members_of_a_module_list_are_decided_by_their_constructions() -> None:
    """An FPN's top-down sum into lateral outputs: a ReLU kept them only when the laterals
    are built with their activation."""
    hazard = LISTED.format(args="")
    safe = LISTED.format(args=", with_act=False")
    assert codes(hazard) == [(31, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


UNDECIDED = """
import torch
import torch.nn as nn


class Conv(nn.Module):
    def __init__(self, relued):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)
        self.relu = nn.ReLU()
        self.relued = relued

    def forward(self, x):
        x = self.conv(x)
        if self.relued:
            x = self.relu(x)
        {later}
        return x


class Block(nn.Module):
    def __init__(self, relued):
        super().__init__()
        self.first = Conv({given})

    def forward(self, x):
        y = self.first(x)
        y += x
        return y
"""


def test_an_instance_whose_arm_the_source_does_not_decide_stays_unsaved() -> None:
    """A flag passed on from another constructor's parameter, or an arm followed by a later
    one that makes a new value, decides nothing."""
    assert codes(UNDECIDED.format(given="relued", later="")) == []
    later = "if x.shape[0] > 1:\n            x = self.conv(x)"
    assert codes(UNDECIDED.format(given="True", later=later)) == []
    assert codes(UNDECIDED.format(given="True", later="")) == [(28, "IPL001")]


STORED = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Pix2Pix(nn.Module):
    def __init__(self):
        super().__init__()
        self.netG = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4))
        self.netD = nn.Linear(4, 1)
        self.optimizer_G = torch.optim.SGD(self.netG.parameters(), lr=0.1)

    def forward(self, x):
        self.fake = self.netG(x)
        self.score = self.netD(self.fake)

    def optimize_parameters(self, x):
        self.forward(x)
        self.score.sum().backward(retain_graph=True)
        {first}
        self.score.mean().backward()
        {last}


for _ in range(2):
    Pix2Pix().optimize_parameters(torch.randn(2, 4))
"""


def test_what_a_method_stores_on_self_is_there_for_its_caller() -> None:
    """A training step that runs ``self.forward(x)`` and then differentiates what it stored
    (round 26's DR-GAN), in a class built twice (each call's ``self`` is its own, so what
    one method left is known only through the call): stepping the generator between two
    backward passes over that graph overwrites the weights it saved."""
    hazard = STORED.format(first="self.optimizer_G.step()", last="")
    safe = STORED.format(first="", last="self.optimizer_G.step()")
    assert codes(hazard) == [(22, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


CALLED = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class GANModel:
    def __init__(self):
        self.G = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4))
        self.D = nn.Linear(4, 1)
        self.optimizer_G = torch.optim.Adam(self.G.parameters())

    def forward(self, x):
        self.fake = self.G(x)
        self.pred_fake = self.D(self.fake)

    def backward_G(self):
        self.loss_G = -self.pred_fake.mean()
        self.loss_G.backward(retain_graph=True)

    def backward_D(self):
        self.loss_D = self.pred_fake.pow(2).mean()
        self.loss_D.backward()

    def optimize_parameters(self, x):
        self.forward(x)
        self.backward_G()
        {first}
        self.backward_D()
        {last}


GANModel().optimize_parameters(torch.randn(2, 4))
"""


def test_a_capitalised_attribute_of_self_is_called_not_constructed() -> None:
    """``self.pred_fake = self.D(self.fake)`` calls the discriminator held in ``self.D``; it
    builds no module, so ``self.pred_fake`` holds the graph later methods differentiate."""
    hazard = CALLED.format(first="self.optimizer_G.step()", last="")
    safe = CALLED.format(first="", last="self.optimizer_G.step()")
    assert codes(hazard) == [(29, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


DRIVEN = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4))

    def forward(self, x):
        return self.net(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))

    def forward(self, x):
        return self.net(x)


class SliceModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.g = Generator()
        self.d = Discriminator()
        self.g_optimizer = torch.optim.Adam(self.g.parameters())
        self.d_optimizer = torch.optim.Adam(self.d.parameters())

    def process(self, x, real):
        fake = self.g(x)
        d_loss = self.d(real).mean() - self.d(fake.detach()).mean()
        g_loss = self.d(fake).mean()
        return d_loss, g_loss

    def backward(self, d_loss, g_loss):
        {order}


def main():
    model = SliceModel()
    d_loss, g_loss = model.process(torch.randn(2, 4), torch.randn(2, 4))
    model.backward(d_loss, g_loss)


main()
"""

D_FIRST = """d_loss.backward()
        self.d_optimizer.step()
        g_loss.backward()
        self.g_optimizer.step()"""

G_FIRST = """g_loss.backward()
        self.g_optimizer.step()
        d_loss.backward()
        self.d_optimizer.step()"""


def test_a_method_called_on_the_one_instance_steps_and_differentiates_there() -> None:
    """round 26's SliceGAN: ``model.backward(d_loss, g_loss)`` is the class's own method
    (no framework's backward of its first argument); the discriminator's step in it breaks
    what the generator's loss, computed through the discriminator, still needs. Stepping
    the generator before the discriminator's loss, which saw only a detached fake, is safe."""
    hazard = DRIVEN.format(order=D_FIRST)
    safe = DRIVEN.format(order=G_FIRST)
    assert codes(hazard) == [(42, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


def test_a_test_the_instance_cannot_decide_is_undecided_not_a_crash() -> None:
    """A negative literal is a number (``if padding == -1:``, met in timm's cpubone, first
    looped between truth and value); other arithmetic in a test decides nothing."""
    import libcst as cst

    from inplace_lint.facts.instance_config import truth

    for text in ("-self.scale", "not -x", "~flag and True", "a + 1 == 2"):
        assert truth(cst.parse_expression(text), {"a": 1, "flag": True}) is None
    assert truth(cst.parse_expression("-self.scale"), {"self.scale": 2}) is True
    assert truth(cst.parse_expression("not self.relu is None"), {"self.relu": None}) is False
    assert truth(cst.parse_expression("padding == -1"), {"padding": -1}) is True


KWARGS = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasicConv(nn.Module):
    def __init__(self, in_channels, out_channels, relu=True, **kwargs):
        super().__init__()
        self.relu = relu
        self.conv = nn.Conv2d(in_channels, out_channels, bias=False, **kwargs)

    def forward(self, x):
        x = self.conv(x)
        if self.relu:
            x = F.relu(x)
        return x


class SGABlock(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.conv_refine = BasicConv(channels, channels, kernel_size=3, padding=1{relu})

    def forward(self, x):
        rem = x
        x = self.conv_refine(x)
        x += rem
        return x


SGABlock()(torch.randn(1, 4, 5, 5)).sum().backward()
"""


def test_keywords_taken_by_kwargs_do_not_hide_the_flags_after_them() -> None:
    """ptlflow's SeparableFlow (untuned run 16): ``BasicConv(..., kernel_size=3, padding=1,
    relu=False)`` passes ``kernel_size`` to ``**kwargs`` and still turns the ReLU off."""
    hazard = KWARGS.format(relu="")
    safe = KWARGS.format(relu=", relu=False")
    assert codes(hazard) == [(30, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


INITIALIZED = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Single_DRGAN(object):
    def initialize(self):
        self.G = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4))
        self.D = nn.Linear(4, 2)
        self.optimizer_G = torch.optim.Adam(self.G.parameters())
        self.optimizer_D = torch.optim.Adam(self.D.parameters())

    def forward(self, x):
        self.syn_image = self.G(x)
        self.syn = self.D(self.syn_image)
        self.syn_d = self.D({for_d})

    def optimize_G_parameters(self):
        self.optimizer_G.zero_grad()
        self.syn.sum().backward(retain_graph=True)
        self.optimizer_G.step()

    def optimize_D_parameters(self):
        self.optimizer_D.zero_grad()
        self.syn_d.mean().backward()
        self.optimizer_D.step()


def main():
    model = Single_DRGAN()
    model.initialize()
    model.forward(torch.randn(3, 4))
    model.optimize_G_parameters()
    model.optimize_D_parameters()


main()
"""


def test_optimizers_built_in_an_initialize_method_are_known_to_the_others() -> None:
    """round 26's DR-GAN builds its networks and optimizers in ``initialize()``, which no other
    method assigns again; stepping the generator there, before the discriminator's loss goes
    back through the generator's graph, breaks it. Its fix gives the discriminator a detached
    image."""
    hazard = INITIALIZED.format(for_d="self.syn_image")
    safe = INITIALIZED.format(for_d="self.syn_image.detach()")
    assert codes(hazard) == [(23, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)
