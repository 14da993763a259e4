# label: safe
# why: the VGG blocks end in ReLU(inplace=True) but each stored feature is next consumed by an out-of-place MaxPool, and the += / /= accumulators are fresh scalars nothing saved.
# source: https://github.com/meteofrance/mfai/pull/114
import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)


def make_vgg_features(cfg=(8, 8, "M", 16, 16, "M", 16, 16, "M")):
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            layers += [nn.Conv2d(in_channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


class VGG16(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = make_vgg_features()


class PerceptualLoss(torch.nn.Module):
    def __init__(
        self,
        multi_scale: bool = False,
        channel_iterative_mode: bool = True,
        style_block_ids: list = [],
        feature_layer_ids: list = [4, 9],
        feature_block_ids: list = [0, 1],
        alpha_style: float = 0,
        alpha_feature: float = 1,
    ) -> None:
        super().__init__()
        self.device = "cpu"
        self.channel_iterative_mode = channel_iterative_mode
        self.features_memory: list = []
        self.styles_memory: list = []
        self.style_block_ids = style_block_ids
        self.feature_block_ids = feature_block_ids
        self.alpha_style = alpha_style
        self.feature_layer_ids = feature_layer_ids
        self.alpha_feature = alpha_feature
        self.multi_scale = multi_scale
        self.scaling_factor = [0]
        if multi_scale:
            for i in range(3):
                self.scaling_factor.append(2**i)
        self._set_network()

    def _set_blocks(self) -> list:
        blocks = []
        blocks.append(self.network.features[: self.feature_layer_ids[0]].eval())
        for id in range(len(self.feature_layer_ids) - 1):
            blocks.append(
                self.network.features[
                    self.feature_layer_ids[id] : self.feature_layer_ids[id + 1]
                ].eval()
            )
        return blocks

    def _downscale(self, x: Tensor, scale_times: int = 1, mode: str = "bilinear") -> Tensor:
        for _ in range(scale_times):
            x = torch.nn.functional.interpolate(x, scale_factor=0.5, mode=mode)
        return x

    def _set_network(self) -> None:
        self.network = VGG16()
        blocks = self._set_blocks()
        for bl in blocks:
            for p in bl.parameters():
                p.requires_grad = False
        self.blocks = torch.nn.ModuleList(blocks)

    def _forward_net_single_img(self, x: Tensor) -> tuple:
        if len(x.shape) == 3:
            x = x.unsqueeze(1)
        if self.channel_iterative_mode:
            if x.shape[1] == 1:
                x = x.repeat(1, 3, 1, 1)
        features = []
        styles = []
        for i, block in enumerate(self.blocks):
            x = block(x)
            if i in self.feature_block_ids:
                features.append(x)
            if i in self.style_block_ids:
                act_x = x.reshape(x.shape[0], x.shape[1], -1)
                gram_x = act_x @ act_x.permute(0, 2, 1)
                styles.append(gram_x)
        return features, styles

    def _perceptual_loss_given_features_and_target(self, x: Tensor, features_y: list, styles_y: list) -> Tensor:
        features_x, styles_x = self._forward_net_single_img(x)
        loss = torch.tensor(0.0).to(self.device)
        for i, _ in enumerate(self.blocks):
            if i in self.feature_block_ids:
                x = features_x[i]
                y = features_y[i]
                loss_features = torch.nn.functional.l1_loss(x, y)
                loss += self.alpha_feature * loss_features
            if i in self.style_block_ids:
                gram_x = styles_x[i]
                gram_y = styles_y[i]
                loss_style = torch.nn.functional.l1_loss(gram_x, gram_y)
                loss += self.alpha_style * loss_style
        return loss

    def _perceptual_loss_given_input_and_target(self, x: Tensor, y: Tensor) -> Tensor:
        features_x, styles_x = self._forward_net_single_img(x)
        return self._perceptual_loss_given_features_and_target(
            x=y, features_y=features_x, styles_y=styles_x
        )

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        perceptual_loss = torch.tensor(0.0).to(self.device)
        if x.max() > 1 or x.min() < 0:
            raise ValueError("x data should be normalized between 0 and 1")
        x_copy = x.clone()
        y_copy = y.clone()
        for scaling_factor in self.scaling_factor:
            if self.multi_scale:
                x = self._downscale(x_copy, scaling_factor)
                y = self._downscale(y_copy, scaling_factor)
            if self.channel_iterative_mode:
                for channel_id in range(x.shape[1]):
                    perceptual_loss += self._perceptual_loss_given_input_and_target(
                        x=x[:, channel_id, :, :], y=y[:, channel_id, :, :]
                    )
                perceptual_loss /= x.shape[1]
            else:
                perceptual_loss += self._perceptual_loss_given_input_and_target(x=x, y=y)
        return perceptual_loss


class Forecaster(nn.Module):
    def __init__(self, channels: int = 2) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(channels, 8, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(8, channels, 3, padding=1),
        )

    def forward(self, x: Tensor) -> Tensor:
        return torch.sigmoid(self.net(x))


model = Forecaster()
criterion = PerceptualLoss(multi_scale=True, channel_iterative_mode=True)
inputs = torch.rand(2, 2, 32, 32)
targets = torch.rand(2, 2, 32, 32)
preds = model(inputs)
loss = criterion(preds, targets)
loss.backward()
