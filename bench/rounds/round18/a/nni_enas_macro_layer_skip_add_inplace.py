# label: hazard raises
# why: ENASLayer adds the skip connections into the chosen branch output in place (`out += connection`), but that output comes straight from the branch's final ReLU, which saved it for backward (the issue hit it after swapping ReLU for SELU; with current PyTorch the original ReLU already saves its output).
# source: https://github.com/microsoft/nni/issues/2083 (examples/nas/enas/macro.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


class StdConv(nn.Module):
    def __init__(self, C_in, C_out):
        super(StdConv, self).__init__()
        self.conv = nn.Sequential(nn.Conv2d(C_in, C_out, 1, stride=1, padding=0, bias=False), nn.BatchNorm2d(C_out, affine=False), nn.ReLU())

    def forward(self, x):
        return self.conv(x)


class ConvBranch(nn.Module):
    def __init__(self, C_in, C_out, kernel_size, stride, padding, separable):
        super(ConvBranch, self).__init__()
        self.preproc = StdConv(C_in, C_out)
        self.conv = nn.Conv2d(C_out, C_out, kernel_size, stride=stride, padding=padding)
        self.postproc = nn.Sequential(nn.BatchNorm2d(C_out, affine=False), nn.ReLU())

    def forward(self, x):
        out = self.preproc(x)
        out = self.conv(out)
        out = self.postproc(out)
        return out


class PoolBranch(nn.Module):
    def __init__(self, pool_type, C_in, C_out, kernel_size, stride, padding, affine=False):
        super().__init__()
        self.preproc = StdConv(C_in, C_out)
        self.pool = nn.MaxPool2d(kernel_size, stride, padding) if pool_type == "max" else nn.AvgPool2d(kernel_size, stride, padding, count_include_pad=False)
        self.bn = nn.BatchNorm2d(C_out, affine=affine)

    def forward(self, x):
        return self.bn(self.pool(self.preproc(x)))


class LayerChoice(nn.Module):
    # stand-in for nni.nas.pytorch.mutables.LayerChoice with a fixed sampled choice
    def __init__(self, op_candidates, chosen=0):
        super().__init__()
        self.choices = nn.ModuleList(op_candidates)
        self.chosen = chosen

    def forward(self, x):
        return self.choices[self.chosen](x)


class InputChoice(nn.Module):
    # stand-in for nni.nas.pytorch.mutables.InputChoice(reduction="sum") with a fixed sampled mask
    def __init__(self, n_candidates, mask):
        super().__init__()
        self.n_candidates = n_candidates
        self.mask = mask

    def forward(self, optional_inputs, tags=None):
        chosen = [t for t, m in zip(optional_inputs, self.mask) if m]
        if not chosen:
            return None
        return sum(chosen)


class ENASLayer(nn.Module):
    def __init__(self, key, num_prev_layers, in_filters, out_filters, chosen=0):
        super().__init__()
        self.key = key
        self.mutable = LayerChoice([
            ConvBranch(in_filters, out_filters, 3, 1, 1, separable=False),
            ConvBranch(in_filters, out_filters, 5, 1, 2, separable=False),
            PoolBranch("avg", in_filters, out_filters, 3, 1, 1),
            PoolBranch("max", in_filters, out_filters, 3, 1, 1),
        ], chosen=chosen)
        if num_prev_layers > 0:
            self.skipconnect = InputChoice(num_prev_layers, mask=[True] * num_prev_layers)
        else:
            self.skipconnect = None
        self.batch_norm = nn.BatchNorm2d(out_filters, affine=False)

    def forward(self, prev_layers, prev_labels):
        out = self.mutable(prev_layers[-1])
        if self.skipconnect is not None:
            connection = self.skipconnect(prev_layers[:-1], tags=prev_labels)
            if connection is not None:
                out += connection  # <-- IPL001: in-place add into the branch's ReLU output, which ReLU saved for backward
        return self.batch_norm(out)


class GeneralNetwork(nn.Module):
    def __init__(self, num_layers=3, out_filters=8, in_channels=3, num_classes=10):
        super().__init__()
        self.num_layers = num_layers
        self.stem = nn.Sequential(nn.Conv2d(in_channels, out_filters, 3, 1, 1, bias=False), nn.BatchNorm2d(out_filters))
        self.layers = nn.ModuleList()
        for layer_id in range(self.num_layers):
            self.layers.append(ENASLayer("layer_{}".format(layer_id), layer_id, out_filters, out_filters, chosen=layer_id % 2))
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.dense = nn.Linear(out_filters, num_classes)

    def forward(self, x):
        bs = x.size(0)
        cur = self.stem(x)
        layers, labels = [cur], []
        for layer_id in range(self.num_layers):
            cur = self.layers[layer_id](layers, labels)
            layers.append(cur)
            labels.append(self.layers[layer_id].key)
        cur = self.gap(cur).view(bs, -1)
        return self.dense(cur)


model = GeneralNetwork()
criterion = nn.CrossEntropyLoss()
optim = torch.optim.SGD(model.parameters(), 0.05, momentum=0.9, weight_decay=1.0e-4)
x = torch.randn(4, 3, 8, 8)
y = torch.randint(0, 10, (4,))
logits = model(x)
loss = criterion(logits, y)
optim.zero_grad()
loss.backward()
optim.step()
