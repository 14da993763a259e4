# label: hazard raises no-twin
# why: the noise image's VGG activations are computed once outside the L-BFGS closure, and optimizer.step() rewrites the noise image in place between closure calls, so the second backward through the old graph fails.
# source: https://github.com/halahup/NeuralStyleTransfer/issues/1
import torch
import torch.nn as nn

torch.manual_seed(0)


class VGG(nn.Module):
    def __init__(self):
        super().__init__()
        self.vgg = nn.Sequential(
            nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(inplace=True),
        )
        for p in self.vgg.parameters():
            p.requires_grad = False

    def get_content_activations(self, x):
        return self.vgg[:7](x)

    def get_style_activations(self, x):
        features = [self.vgg[:2](x)] + [self.vgg[:4](x)] + [self.vgg[:7](x)]
        return features


def gram(x):
    b, c, h, w = x.size()
    x = x.view(b * c, -1)
    return torch.mm(x, x.t()) / (h * w)


vgg = VGG()
content = torch.rand(1, 3, 8, 8)
style = torch.rand(1, 3, 8, 8)
noise = content.clone().requires_grad_(True)
optimizer = torch.optim.LBFGS([noise], max_iter=3)

content_activations = vgg.get_content_activations(content).detach()
style_grams = [gram(f).detach() for f in vgg.get_style_activations(style)]

noise_content_activations = vgg.get_content_activations(noise)
noise_style_activations = vgg.get_style_activations(noise)


def closure():
    optimizer.zero_grad()
    content_loss = ((noise_content_activations - content_activations) ** 2).mean()
    style_loss = sum(((gram(a) - g) ** 2).mean() for a, g in zip(noise_style_activations, style_grams))
    total_loss = content_loss + 1e3 * style_loss
    total_loss.backward(retain_graph=True)
    return total_loss


optimizer.step(closure)  # <-- IPL001: L-BFGS updates noise in place before the closure backprops the old graph again
