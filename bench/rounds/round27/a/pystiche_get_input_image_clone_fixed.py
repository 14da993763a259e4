# label: safe no-twin
# why: after the fix get_input_image returns starting_point.clone(), so the LBFGS steps update a private leaf in place while the caller's content_image stays untouched for the next style and for the final comparison.
# source: https://github.com/pystiche/pystiche/pull/250 (commit 1111330af0bc2bb6e37bf8420a69204c8797ab69)
from typing import Optional, Union

import torch
from torch import nn, optim
from torch.nn import functional as F

torch.manual_seed(0)


def get_input_image(
    starting_point: Union[str, torch.Tensor] = "content",
    content_image: Optional[torch.Tensor] = None,
    style_image: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    if isinstance(starting_point, torch.Tensor):
        return starting_point.clone()
    if starting_point == "content":
        if content_image is not None:
            return content_image.clone()
        raise RuntimeError("starting_point is 'content', but no content image is given")
    elif starting_point == "random":
        return torch.rand_like(content_image)
    raise RuntimeError


def default_image_optimizer(input_image: torch.Tensor) -> optim.Optimizer:
    return optim.LBFGS([input_image.requires_grad_(True)], lr=1.0, max_iter=1)


def default_image_optim_loop(input_image, criterion, get_optimizer=None, num_steps=3):
    if get_optimizer is None:
        get_optimizer = default_image_optimizer
    if isinstance(num_steps, int):
        num_steps = range(1, num_steps + 1)
    optimizer = get_optimizer(input_image)
    for step in num_steps:

        def closure():
            optimizer.zero_grad()
            loss = criterion(input_image)
            loss.backward()
            return loss.item()

        optimizer.step(closure)
    return input_image.detach()


def gram_matrix(enc):
    b, c, h, w = enc.shape
    enc = enc.view(b, c, h * w)
    return enc @ enc.transpose(1, 2) / (c * h * w)


class PerceptualLoss(nn.Module):
    def __init__(self, encoder, style_weight=1e5):
        super().__init__()
        self.encoder = encoder
        self.style_weight = style_weight

    def set_content_image(self, image):
        with torch.no_grad():
            self.content_target = self.encoder(image)

    def set_style_image(self, image):
        with torch.no_grad():
            self.style_target = gram_matrix(self.encoder(image))

    def forward(self, input_image):
        enc = self.encoder(input_image)
        content_loss = F.mse_loss(enc, self.content_target)
        style_loss = F.mse_loss(gram_matrix(enc), self.style_target)
        return content_loss + self.style_weight * style_loss


def main():
    encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
    for p in encoder.parameters():
        p.requires_grad_(False)
    content_image = torch.rand(1, 3, 16, 16)
    style_images = [torch.rand(1, 3, 16, 16), torch.rand(1, 3, 16, 16)]
    outputs = []
    for style_image in style_images:
        criterion = PerceptualLoss(encoder)
        criterion.set_content_image(content_image)
        criterion.set_style_image(style_image)
        input_image = get_input_image(starting_point=content_image, content_image=content_image)
        outputs.append(default_image_optim_loop(input_image, criterion, num_steps=3))
    return torch.stack(outputs), content_image.detach().clone()


outputs, content_after = main()
