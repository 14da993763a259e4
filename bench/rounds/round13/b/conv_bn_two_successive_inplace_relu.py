# label: hazard raises
# why: the second in-place ReLU overwrites the output that the first in-place ReLU saved for its backward, so backward reports a version mismatch
# source: https://github.com/pytorch/pytorch/issues/34429
import torch
import torch.nn as nn

torch.manual_seed(0)

conv1 = nn.Conv2d(3, 8, kernel_size=1, bias=False)
bn = nn.BatchNorm2d(8)
relu1 = nn.ReLU(inplace=True)
relu2 = nn.ReLU(inplace=True)  # <-- IPL001: rewrites relu1's saved output in place

input = torch.randn(4, 3, 5, 5)
x = conv1(input)
x = bn(x)
x = relu1(x)

# the second successive inplace ReLU operation
x = relu2(x)

x = x.flatten()
x = torch.sum(x)
x.backward()
