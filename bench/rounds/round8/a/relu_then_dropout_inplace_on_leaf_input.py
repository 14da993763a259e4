# label: hazard raises
# why: F.relu(..., inplace=True) and F.dropout(..., inplace=True) are applied straight to a leaf input that requires grad.
# source: https://github.com/pytorch/pytorch/issues/727
import numpy as np
import torch
import torch.nn.functional as F
from torch.autograd import Variable

torch.manual_seed(0)
np.random.seed(0)

x = Variable(torch.from_numpy(np.random.randn(4, 6, 10, 10)).float(), requires_grad=True)
x = F.relu(x, inplace=True)  # <-- IPL003: in-place relu on a leaf that requires grad
x = F.dropout(x, p=0.1, inplace=True)  # <-- IPL001: in-place dropout on the relu output saved for backward
result = torch.sum(x)
result.backward()
