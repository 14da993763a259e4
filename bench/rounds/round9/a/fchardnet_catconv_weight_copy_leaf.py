# label: hazard raises no-twin
# why: the CatConv2d check copies reference weights with `cconv.weight[:,:,:,:] = W[:,:,:,:]` outside torch.no_grad(), an in-place write to a view of a leaf Parameter
# source: https://github.com/PingoLH/FCHarDNet/issues/61
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CatConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, relu=False):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels, *kernel_size))
        self.bias = nn.Parameter(torch.zeros(out_channels))
        self.relu = relu
        nn.init.kaiming_uniform_(self.weight)

    def forward(self, x_list):
        out = F.conv2d(torch.cat(x_list, 1), self.weight, self.bias, padding=1)
        return F.relu(out) if self.relu else out


x_list = [4, 6, 2]
img_sz = 6
output_ch = 5
X_list = [torch.randn(2, x, img_sz, img_sz) for x in x_list]

W = torch.randn(output_ch, sum(x_list), 3, 3)
bias = torch.randn(output_ch)

cconv = CatConv2d(sum(x_list), output_ch, (3, 3), relu=False)
cconv.weight[:, :, :, :] = W[:, :, :, :]  # <-- IPL003: in-place write into a view of a leaf Parameter that requires grad
cconv.bias[:] = bias[:]  # <-- IPL003: same for the bias

conv = nn.Conv2d(sum(x_list), output_ch, kernel_size=3, stride=1, bias=True, padding=1)
conv.weight[:, :, :, :] = W[:, :, :, :]  # <-- IPL003: same for the reference conv
conv.bias[:] = bias[:]  # <-- IPL003: same for its bias

out = cconv(X_list)
out2 = conv(torch.cat(X_list, 1))
diff = (out - out2).abs().max()
