# label: hazard raises
# why: denormalize() iterates over `denormalized[0]` (unbind views of a clone of an input that requires grad) and calls channel.mul_().add_(), which autograd forbids on multi-output views.
# source: https://github.com/MisaOgura/flashtorch/issues/45
import torch
import torch.nn as nn

torch.manual_seed(0)


def apply_transforms(image, means, stds):
    tensor = (image - torch.tensor(means)[:, None, None]) / torch.tensor(stds)[:, None, None]
    tensor = tensor.unsqueeze(0)
    tensor.requires_grad = True
    return tensor


def denormalize(tensor):
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]

    denormalized = tensor.clone()

    for channel, mean, std in zip(denormalized[0], means, stds):
        channel.mul_(std).add_(mean)  # <-- IPL001: in-place on an unbind view of a tensor in the graph

    return denormalized


class Backprop:
    def __init__(self, model):
        self.model = model
        self.gradients = None

    def calculate_gradients(self, input_, target_class):
        self.model.zero_grad()
        output = self.model(input_)
        target = torch.zeros_like(output)
        target[0][target_class] = 1
        output.backward(gradient=target)
        self.gradients = input_.grad.clone()
        return self.gradients


model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
image = torch.rand(3, 8, 8)
input_ = apply_transforms(image, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
backprop = Backprop(model)
gradients = backprop.calculate_gradients(input_, 2)
shown = denormalize(input_)
