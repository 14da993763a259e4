# label: hazard raises
# why: with activate='relu' each Convolutional ends in nn.ReLU(inplace=True), and CSPBlock then does `out += residual` on that ReLU output, which ReLU's backward still needs
# source: https://github.com/argusswift/YOLOv4-pytorch/issues/247
import torch
import torch.nn as nn

torch.manual_seed(0)


class Mish(nn.Module):
    def forward(self, x):
        return x * torch.tanh(nn.functional.softplus(x))


norm_name = {"bn": nn.BatchNorm2d}
activate_name = {
    "relu": nn.ReLU,
    "leaky": nn.LeakyReLU,
    "linear": nn.Identity(),
    "mish": Mish(),
}


class Convolutional(nn.Module):
    def __init__(self, filters_in, filters_out, kernel_size, stride=1, norm="bn", activate="mish"):
        super(Convolutional, self).__init__()
        self.norm = norm
        self.activate = activate
        self.__conv = nn.Conv2d(in_channels=filters_in, out_channels=filters_out, kernel_size=kernel_size,
                                stride=stride, padding=kernel_size // 2, bias=not norm)
        if norm:
            assert norm in norm_name.keys()
            if norm == "bn":
                self.__norm = norm_name[norm](num_features=filters_out)
        if activate:
            assert activate in activate_name.keys()
            if activate == "leaky":
                self.__activate = activate_name[activate](negative_slope=0.1, inplace=True)
            if activate == "relu":
                self.__activate = activate_name[activate](inplace=True)
            if activate == "mish":
                self.__activate = activate_name[activate]

    def forward(self, x):
        x = self.__conv(x)
        if self.norm:
            x = self.__norm(x)
        if self.activate:
            x = self.__activate(x)
        return x


class CSPBlock(nn.Module):
    def __init__(self, in_channels, out_channels, hidden_channels=None, residual_activation="linear", activate="relu"):
        super(CSPBlock, self).__init__()
        if hidden_channels is None:
            hidden_channels = out_channels
        self.block = nn.Sequential(
            Convolutional(in_channels, hidden_channels, 1, activate=activate),
            Convolutional(hidden_channels, out_channels, 3, activate=activate),
        )
        self.activation = activate_name[residual_activation]

    def forward(self, x):
        residual = x
        out = self.block(x)
        out += residual  # <-- IPL001: out is the in-place ReLU output of the last Convolutional, saved for its backward
        return out


class CSPStage(nn.Module):
    def __init__(self, in_channels, out_channels, num_blocks, activate="relu"):
        super(CSPStage, self).__init__()
        self.downsample_conv = Convolutional(in_channels, out_channels, 3, stride=2, activate=activate)
        self.split_conv0 = Convolutional(out_channels, out_channels // 2, 1, activate=activate)
        self.split_conv1 = Convolutional(out_channels, out_channels // 2, 1, activate=activate)
        self.blocks_conv = nn.Sequential(
            *[CSPBlock(out_channels // 2, out_channels // 2, activate=activate) for _ in range(num_blocks)],
            Convolutional(out_channels // 2, out_channels // 2, 1, activate=activate),
        )
        self.concat_conv = Convolutional(out_channels, out_channels, 1, activate=activate)

    def forward(self, x):
        x = self.downsample_conv(x)
        x0 = self.split_conv0(x)
        x1 = self.split_conv1(x)
        x1 = self.blocks_conv(x1)
        x = torch.cat([x0, x1], dim=1)
        x = self.concat_conv(x)
        return x


class CSPDarknet53(nn.Module):
    def __init__(self, stem_channels=4, feature_channels=(8, 16), activate="relu"):
        super(CSPDarknet53, self).__init__()
        self.stem_conv = Convolutional(3, stem_channels, 3, activate=activate)
        self.stages = nn.ModuleList([
            CSPStage(stem_channels, feature_channels[0], 1, activate=activate),
            CSPStage(feature_channels[0], feature_channels[1], 2, activate=activate),
        ])

    def forward(self, x):
        x = self.stem_conv(x)
        features = []
        for stage in self.stages:
            x = stage(x)
            features.append(x)
        return features


backbone = CSPDarknet53(activate="relu")
img = torch.randn(2, 3, 16, 16)
features = backbone(img)
loss = sum(f.mean() for f in features)
loss.backward()
