# label: hazard silent
# why: RandomGaussianIllumination's transform returns input.add_(gradient).clamp_(0, 1), so when the whole batch is selected it rewrites the caller's image tensor, and the "clean" view of a contrastive pair silently becomes the augmented one
# source: https://github.com/kornia/kornia/pull/3779
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class IntensityAugmentationBase2D(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, input):
        batch_prob = (torch.rand(input.shape[0]) < self.p).float()
        params = self.generate_parameters(input.shape)
        params["batch_prob"] = batch_prob
        to_apply = torch.atleast_1d(batch_prob > 0.5)
        if to_apply.all():
            return self.apply_transform(input, params)
        output = input.clone()
        if to_apply.any():
            sub = {k: (v[to_apply] if isinstance(v, torch.Tensor) and v.shape[:1] == input.shape[:1] else v) for k, v in params.items()}
            output[to_apply] = self.apply_transform(input[to_apply], sub)
        return output


class RandomGaussianIllumination(IntensityAugmentationBase2D):
    def __init__(self, gain=(0.01, 0.15), center=(0.1, 0.9), sigma=(0.2, 1.0), p=0.5):
        super().__init__(p=p)
        self.gain, self.center, self.sigma = gain, center, sigma

    def generate_parameters(self, shape):
        b, c, h, w = shape
        gain = torch.empty(b).uniform_(*self.gain)
        cy, cx = torch.empty(b).uniform_(*self.center), torch.empty(b).uniform_(*self.center)
        sigma = torch.empty(b).uniform_(*self.sigma)
        ys = torch.linspace(0, 1, h).view(1, h, 1)
        xs = torch.linspace(0, 1, w).view(1, 1, w)
        g = torch.exp(-((ys - cy.view(b, 1, 1)) ** 2 + (xs - cx.view(b, 1, 1)) ** 2) / (2 * sigma.view(b, 1, 1) ** 2))
        return {"gradient": (gain.view(b, 1, 1) * g).unsqueeze(1).expand(b, c, h, w)}

    def apply_transform(self, input, params):
        # We must explicitly move it to the input's device before adding.
        gradient = params["gradient"].to(input.device, input.dtype)
        return input.add_(gradient).clamp_(0, 1)  # <-- IPL004: mutates the caller's image batch in place


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 16))

    def forward(self, x):
        return F.normalize(self.net(x), dim=-1)


def info_nce(z1, z2, temperature=0.5):
    logits = z1 @ z2.t() / temperature
    return F.cross_entropy(logits, torch.arange(len(z1)))


augment = RandomGaussianIllumination(p=1.0)
encoder = Encoder()
images = torch.rand(4, 3, 12, 12)
clean_view = images
aug_view = augment(images)
loss = info_nce(encoder(clean_view), encoder(aug_view))
loss.backward()
clean_mean = clean_view.mean()
