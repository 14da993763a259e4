"""What a method of a same-file submodule returns (pyiqa's CLIPScore, round 35):

``img_features = self.clip_model.encode_image(x)``, where ``encode_image`` returns
``self.visual(image)``, was a value of unknown kind (a module's method may return anything),
so ``img_features /= img_features.norm(dim=-1, keepdim=True)`` read as a possible rebinding of
a number, and the overwrite of what ``norm`` saved went unseen. The method is now interpreted
at the call with its own submodules, like a helper: it returns the visual tower's output, a
tensor. Dividing out of place is clean. The programs run with torch.
"""

from __future__ import annotations

from programs import behave, codes

CLIP = """
import torch
from torch import nn


class VisualEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Linear(3, 4)
        self.proj = nn.Parameter(torch.randn(4, 5))

    def forward(self, x):
        return self.conv1(x) @ self.proj


class TinyCLIP(nn.Module):
    def __init__(self):
        super().__init__()
        self.visual = VisualEncoder()

    def encode_image(self, image):
        return self.visual(image)


class CLIPScore(nn.Module):
    def __init__(self):
        super().__init__()
        self.clip_model = TinyCLIP()

    def forward(self, img):
        img_features = self.clip_model.encode_image(img)
        {normalise}
        return img_features.sum()


img = torch.rand(2, 3, requires_grad=True)
CLIPScore()(img).backward()
"""


def test_dividing_what_a_submodule_method_returned_by_its_norm_breaks_backward() -> None:
    hazard = CLIP.format(normalise="img_features /= img_features.norm(dim=-1, keepdim=True)")
    assert codes(hazard) == [(32, "IPL001")]
    safe = CLIP.format(
        normalise="img_features = img_features / img_features.norm(dim=-1, keepdim=True)"
    )
    assert codes(safe) == []
    behave(hazard, safe)
