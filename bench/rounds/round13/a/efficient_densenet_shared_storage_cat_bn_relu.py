# label: hazard silent
# why: the memory-efficient DenseNet writes every layer's concat+BN+ReLU output into one shared storage; conv2d saves that relu_output for its weight gradient, and the next layer overwrites the same memory through a different tensor (no shared version counter), so conv weight gradients are silently wrong.
# source: https://github.com/gpleiss/efficient_densenet_pytorch/pull/28
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class _SharedAllocation(object):
    """A helper class which maintains a shared memory allocation used by all layers of a dense block."""

    def __init__(self, size):
        self.buffer = torch.zeros(size)

    def tensor(self, size):
        numel = 1
        for s in size:
            numel *= s
        if self.buffer.numel() < numel:
            self.buffer = torch.zeros(numel)
        return torch.empty(0).set_(self.buffer.untyped_storage(), 0, size)


class _EfficientCatBNReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, shared_alloc, norm_weight, norm_bias, *inputs):
        ctx.save_for_backward(norm_weight, norm_bias, *inputs)
        num_channels = sum(i.size(1) for i in inputs)
        size = (inputs[0].size(0), num_channels, inputs[0].size(2), inputs[0].size(3))
        relu_output = shared_alloc.tensor(size)
        torch.cat(inputs, dim=1, out=relu_output)  # <-- IPL002, IPL007: writes into the shared storage that an earlier layer's conv saved
        mean = relu_output.mean(dim=(0, 2, 3), keepdim=True)
        var = relu_output.var(dim=(0, 2, 3), keepdim=True, unbiased=False)
        relu_output = ((relu_output - mean) / (var + 1e-5).sqrt() * norm_weight.view(1, -1, 1, 1) + norm_bias.view(1, -1, 1, 1)).clamp(min=0)
        out = shared_alloc.tensor(size)
        out.copy_(relu_output)  # <-- IPL002, IPL007: result handed out from the shared storage
        return out

    @staticmethod
    def backward(ctx, grad_output):
        norm_weight, norm_bias, *inputs = ctx.saved_tensors
        with torch.enable_grad():
            inputs_ = [i.detach().requires_grad_() for i in inputs]
            w = norm_weight.detach().requires_grad_()
            b = norm_bias.detach().requires_grad_()
            x = torch.cat(inputs_, dim=1)
            mean = x.mean(dim=(0, 2, 3), keepdim=True)
            var = x.var(dim=(0, 2, 3), keepdim=True, unbiased=False)
            out = ((x - mean) / (var + 1e-5).sqrt() * w.view(1, -1, 1, 1) + b.view(1, -1, 1, 1)).clamp(min=0)
        grads = torch.autograd.grad(out, [w, b] + inputs_, grad_output)
        return (None, grads[0], grads[1]) + tuple(grads[2:])


class _EfficientDenseLayer(nn.Module):
    def __init__(self, shared_alloc, num_input_features, growth_rate):
        super().__init__()
        self.shared_alloc = shared_alloc
        self.norm_weight = nn.Parameter(torch.ones(num_input_features))
        self.norm_bias = nn.Parameter(torch.zeros(num_input_features))
        self.conv_weight = nn.Parameter(torch.randn(growth_rate, num_input_features, 1, 1) * 0.3)

    def forward(self, *prev_features):
        relu_output = _EfficientCatBNReLU.apply(self.shared_alloc, self.norm_weight, self.norm_bias, *prev_features)
        conv_output = F.conv2d(relu_output, self.conv_weight, bias=None, stride=1, padding=0, dilation=1, groups=1)
        return conv_output


class _EfficientDenseBlock(nn.Module):
    def __init__(self, num_layers, num_input_features, growth_rate):
        super().__init__()
        self.shared_alloc = _SharedAllocation(4096)
        self.layers = nn.ModuleList([
            _EfficientDenseLayer(self.shared_alloc, num_input_features + i * growth_rate, growth_rate)
            for i in range(num_layers)])

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            features.append(layer(*features))
        return torch.cat(features, dim=1)


block = _EfficientDenseBlock(num_layers=3, num_input_features=2, growth_rate=2)
classifier = nn.Linear(2 + 3 * 2, 3)
images = torch.randn(4, 2, 3, 3)
labels = torch.tensor([0, 1, 2, 0])
out = block(images)
logits = classifier(out.mean(dim=(2, 3)))
loss = F.cross_entropy(logits, labels)
loss.backward()
