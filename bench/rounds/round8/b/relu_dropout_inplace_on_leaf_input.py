# label: hazard raises
# why: F.relu(x, inplace=True) and then F.dropout(x, inplace=True) are applied directly to the input tensor, a leaf that requires grad
# source: https://github.com/pytorch/pytorch/issues/727
import numpy as np
import torch
import torch.nn.functional as F

torch.manual_seed(0)
np.random.seed(0)

x = torch.from_numpy(np.random.randn(4, 6, 10, 10)).float().requires_grad_()
x = F.relu(x, inplace=True)  # <-- IPL003: in-place ReLU on a leaf that requires grad
x = F.dropout(x, p=0.1, inplace=True)  # <-- IPL003, IPL001: in-place dropout on the same leaf (and on the ReLU output ReLU saved)
result = torch.sum(x)
result.backward()
