# label: hazard raises
# why: the zero-cost proxy installs register_full_backward_hook on the BatchNorm layers, whose outputs then come out of BackwardHookFunction; the nn.ReLU(inplace=True) that follows modifies that output in place, which autograd forbids.
# source: https://github.com/automl/NASLib/issues/113
import torch
import torch.nn as nn

torch.manual_seed(0)


class ReLUConvBN(nn.Module):
    def __init__(self, C_in, C_out, kernel_size, stride=1, padding=1, affine=True):
        super().__init__()
        self.op = nn.Sequential(
            nn.Conv2d(C_in, C_out, kernel_size, stride=stride, padding=padding, bias=False),
            nn.BatchNorm2d(C_out, affine=affine),
            nn.ReLU(inplace=True),  # <-- IPL001: in-place ReLU on the output of a module with a full backward hook
        )

    def forward(self, x):
        return self.op(x)


class Cell(nn.Module):
    def __init__(self, C):
        super().__init__()
        self.edge_0_1 = ReLUConvBN(C, C, 3)
        self.edge_0_2 = nn.AvgPool2d(3, stride=1, padding=1)
        self.edge_1_2 = ReLUConvBN(C, C, 1, padding=0)

    def forward(self, x):
        n1 = self.edge_0_1(x)
        n2 = self.edge_0_2(x) + self.edge_1_2(n1)
        return n2


class Network(nn.Module):
    def __init__(self, C=4, num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, C, 3, padding=1, bias=False), nn.BatchNorm2d(C))
        self.cells = nn.Sequential(Cell(C), Cell(C))
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(C, num_classes)

    def forward(self, x):
        x = self.cells(self.stem(x))
        return self.classifier(self.gap(x).flatten(1))


def compute_grad_norm_per_bn(net, inputs, targets, loss_fn):
    grad_norms = []

    def hook(module, grad_input, grad_output):
        grad_norms.append(grad_output[0].norm())

    handles = [m.register_full_backward_hook(hook) for m in net.modules() if isinstance(m, nn.BatchNorm2d)]
    outputs = net(inputs)
    loss = loss_fn(outputs, targets)
    loss.backward()
    for h in handles:
        h.remove()
    return torch.stack(grad_norms).sum()


net = Network()
inputs = torch.randn(4, 3, 8, 8)
targets = torch.randint(0, 10, (4,))
score = compute_grad_norm_per_bn(net, inputs, targets, nn.CrossEntropyLoss())
