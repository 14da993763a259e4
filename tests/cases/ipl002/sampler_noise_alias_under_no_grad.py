# label: hazard silent
# why: under no_grad the first image is overwritten through an alias of the noise, and the mask built afterwards reads the changed noise; no autograd involved, the values are wrong anyway
import torch

torch.manual_seed(0)


class Pipeline:
    @torch.no_grad()
    def __call__(self, shape: tuple[int, ...], start: torch.Tensor, t: float):
        noise = torch.randn(shape)
        images = noise
        images[0, 0] = start * t + noise[0, 0] * (1 - t)  # <-- IPL002
        mask = start * t + noise * (1 - t)
        return images, mask


images, mask = Pipeline()((2, 1, 4, 4), torch.ones(4, 4), 0.5)
