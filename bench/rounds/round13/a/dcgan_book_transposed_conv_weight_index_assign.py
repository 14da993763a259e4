# label: hazard raises no-twin
# why: the book's transposed-convolution demo writes kernel values with `m.weight[0, 0, 0, 0] = 1`, an in-place write to a view of a leaf Parameter that requires grad (the fix is to write through m.weight.data).
# source: https://github.com/YutaroOgawa/pytorch_advanced/issues/160
import torch
import torch.nn as nn

torch.manual_seed(0)

input = torch.tensor([[[[1., 1.], [2., 2.]]]])

conv_kind = "通常の畳み込み"
m = nn.Conv2d(1, 1, 2, stride=1, bias=False)
m.weight[0, 0, 0, 0] = 1  # <-- IPL003: in-place write to a view of a leaf Parameter
m.weight[0, 0, 0, 1] = 2  # <-- IPL003: in-place write to a view of a leaf Parameter
m.weight[0, 0, 1, 0] = 3  # <-- IPL003: in-place write to a view of a leaf Parameter
m.weight[0, 0, 1, 1] = 4  # <-- IPL003: in-place write to a view of a leaf Parameter
conv_output = m(input)

conv_kind = "転置畳み込み"
mt = nn.ConvTranspose2d(1, 1, 2, stride=1, bias=False)
mt.weight.data[0, 0, 0, 0] = 1
mt.weight.data[0, 0, 0, 1] = 2
mt.weight.data[0, 0, 1, 0] = 3
mt.weight.data[0, 0, 1, 1] = 4
deconv_output = mt(input)
