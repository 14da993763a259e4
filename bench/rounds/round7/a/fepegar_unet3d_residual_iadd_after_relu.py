# label: hazard raises
# why: with residual=True and no pre-activation, conv2 ends with a ReLU whose output ReLU saves for backward, and EncodingBlock adds the residual with `x += connection`.
# source: https://github.com/fepegar/unet/pull/37
from typing import Optional

import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvolutionalBlock(nn.Module):
    def __init__(self, dimensions: int, in_channels: int, out_channels: int, normalization: Optional[str] = None,
                 kernel_size: int = 3, activation: Optional[str] = 'ReLU', preactivation: bool = False,
                 padding: int = 0, dropout: float = 0):
        super().__init__()
        block = nn.ModuleList()
        conv_layer = getattr(nn, f'Conv{dimensions}d')(in_channels, out_channels, kernel_size, padding=padding)

        norm_layer = None
        if normalization is not None:
            class_name = '{}Norm{}d'.format(normalization.capitalize(), dimensions)
            norm_class = getattr(nn, class_name)
            num_features = in_channels if preactivation else out_channels
            norm_layer = norm_class(num_features)

        activation_layer = None
        if activation is not None:
            activation_layer = getattr(nn, activation)()

        if preactivation:
            self.add_if_not_none(block, norm_layer)
            self.add_if_not_none(block, activation_layer)
            self.add_if_not_none(block, conv_layer)
        else:
            self.add_if_not_none(block, conv_layer)
            self.add_if_not_none(block, norm_layer)
            self.add_if_not_none(block, activation_layer)

        if dropout:
            dropout_class = getattr(nn, 'Dropout{}d'.format(dimensions))
            self.add_if_not_none(block, dropout_class(p=dropout))

        self.conv_layer = conv_layer
        self.block = nn.Sequential(*block)

    @staticmethod
    def add_if_not_none(module_list, module):
        if module is not None:
            module_list.append(module)

    def forward(self, x):
        return self.block(x)


class EncodingBlock(nn.Module):
    def __init__(self, in_channels, out_channels_first, dimensions, normalization, pooling_type,
                 preactivation=False, residual=False, padding=1):
        super().__init__()
        self.residual = residual
        self.conv1 = ConvolutionalBlock(dimensions, in_channels, out_channels_first, normalization=normalization,
                                        preactivation=preactivation, padding=padding)
        out_channels_second = 2 * out_channels_first if dimensions == 3 else out_channels_first
        self.conv2 = ConvolutionalBlock(dimensions, out_channels_first, out_channels_second, normalization=normalization,
                                        preactivation=preactivation, padding=padding)
        if residual:
            self.conv_residual = ConvolutionalBlock(dimensions, in_channels, out_channels_second, kernel_size=1,
                                                    normalization=None, activation=None)
        self.downsample = None
        if pooling_type is not None:
            self.downsample = getattr(nn, f'{pooling_type.capitalize()}Pool{dimensions}d')(2)

    def forward(self, x):
        if self.residual:
            connection = self.conv_residual(x)
            x = self.conv1(x)
            x = self.conv2(x)
            x += connection  # <-- IPL001: x is the saved output of conv2's final ReLU
        else:
            x = self.conv1(x)
            x = self.conv2(x)
        if self.downsample is None:
            return x
        skip_connection = x
        x = self.downsample(x)
        return x, skip_connection


class Encoder(nn.Module):
    def __init__(self, in_channels, out_channels_first, dimensions, pooling_type, num_encoding_blocks, normalization, residual):
        super().__init__()
        self.encoding_blocks = nn.ModuleList()
        for _ in range(num_encoding_blocks):
            self.encoding_blocks.append(EncodingBlock(in_channels, out_channels_first, dimensions, normalization,
                                                      pooling_type, residual=residual))
            in_channels = 2 * out_channels_first
            out_channels_first = in_channels

    def forward(self, x):
        skip_connections = []
        for encoding_block in self.encoding_blocks:
            x, skip_connnection = encoding_block(x)
            skip_connections.append(skip_connnection)
        return skip_connections, x


encoder = Encoder(in_channels=1, out_channels_first=2, dimensions=3, pooling_type='max', num_encoding_blocks=2,
                  normalization='batch', residual=True)
volume = torch.randn(2, 1, 8, 8, 8)
skips, bottom = encoder(volume)
loss = bottom.mean() + sum(s.mean() for s in skips)
loss.backward()
