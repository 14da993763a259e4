# label: hazard raises
# why: in Respath `x += shortcut` adds into the output of F.relu returned by Conv2d_batchnorm, which relu saved for its backward
# source: https://github.com/j-sripad/mulitresunet-pytorch/issues/3
from typing import Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Conv2d_batchnorm(nn.Module):
    def __init__(self, input_features: int, num_of_filters: int, kernel_size: Tuple = (2, 2),
                 stride: Tuple = (1, 1), activation: str = 'relu', padding: int = 0) -> None:
        super().__init__()
        self.activation = activation
        self.conv1 = nn.Conv2d(in_channels=input_features, out_channels=num_of_filters,
                               kernel_size=kernel_size, stride=stride, padding=padding)
        self.batchnorm = nn.BatchNorm2d(num_of_filters, affine=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv1(x)
        x = self.batchnorm(x)
        if self.activation == 'relu':
            return F.relu(x)
        else:
            return x


class Respath(nn.Module):
    def __init__(self, input_features: int, filters: int, respath_length: int) -> None:
        super().__init__()
        self.filters = filters
        self.respath_length = respath_length
        self.conv2d_bn_1x1 = Conv2d_batchnorm(input_features=input_features, num_of_filters=self.filters,
                                              kernel_size=(1, 1), activation='None', padding=0)
        self.conv2d_bn_3x3 = Conv2d_batchnorm(input_features=input_features, num_of_filters=self.filters,
                                              kernel_size=(3, 3), activation='relu', padding=1)
        self.conv2d_bn_1x1_common = Conv2d_batchnorm(input_features=self.filters, num_of_filters=self.filters,
                                                     kernel_size=(1, 1), activation='None', padding=0)
        self.conv2d_bn_3x3_common = Conv2d_batchnorm(input_features=self.filters, num_of_filters=self.filters,
                                                     kernel_size=(3, 3), activation='relu', padding=1)
        self.batch_norm1 = nn.BatchNorm2d(filters, affine=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = self.conv2d_bn_1x1(x)
        x = self.conv2d_bn_3x3(x)
        x += shortcut  # <-- IPL001: x is the F.relu output that relu saved for backward
        x = F.relu(x)
        x = self.batch_norm1(x)
        if self.respath_length > 1:
            for i in range(self.respath_length):
                shortcut = self.conv2d_bn_1x1_common(x)
                x = self.conv2d_bn_3x3_common(x)
                x += shortcut  # <-- IPL001: same pattern inside the loop
                x = F.relu(x)
                x = self.batch_norm1(x)
            return x
        else:
            return x


respath1 = Respath(input_features=3, filters=4, respath_length=2)
x_multires1 = torch.randn(2, 3, 8, 8)
out = respath1(x_multires1)
loss = torch.sigmoid(out).mean()
loss.backward()
