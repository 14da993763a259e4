# label: safe
# why: the fix saves clones of the splatting inputs, so the in-place LeakyReLU that later runs on the features no longer touches anything saved for backward.
# source: https://github.com/sniklaus/softmax-splatting/issues/50
import torch
import torch.nn as nn

torch.manual_seed(0)


class softsplat_func(torch.autograd.Function):
    @staticmethod
    def forward(self, tenIn, tenFlow):
        N, C, H, W = tenIn.shape
        gridY, gridX = torch.meshgrid(torch.arange(H), torch.arange(W), indexing="ij")
        fltX = gridX.float() + tenFlow[:, 0]
        fltY = gridY.float() + tenFlow[:, 1]
        intX = fltX.round().long().clamp(0, W - 1)
        intY = fltY.round().long().clamp(0, H - 1)
        index = (intY * W + intX).view(N, 1, H * W).expand(N, C, H * W)
        tenOut = tenIn.new_zeros(N, C, H * W)
        tenOut.scatter_add_(2, index, tenIn.reshape(N, C, H * W))
        self.save_for_backward(tenIn.clone(), tenFlow.clone())
        self.index = index
        return tenOut.view(N, C, H, W)

    @staticmethod
    def backward(self, tenOutgrad):
        tenIn, tenFlow = self.saved_tensors
        N, C, H, W = tenIn.shape
        tenIngrad = tenOutgrad.reshape(N, C, H * W).gather(2, self.index).view(N, C, H, W)
        tenFlowgrad = (tenIngrad * tenIn).sum(1, keepdim=True).expand(N, 2, H, W) * 0.01
        return tenIngrad, tenFlowgrad


def softsplat(tenIn, tenFlow, tenMetric=None, strMode="sum"):
    if strMode == "sum":
        return softsplat_func.apply(tenIn, tenFlow)
    tenIn = torch.cat([tenIn * tenMetric.exp(), tenMetric.exp()], 1)
    tenOut = softsplat_func.apply(tenIn, tenFlow)
    return tenOut[:, :-1] / (tenOut[:, -1:] + 1e-7)


class Synthesis(nn.Module):
    def __init__(self):
        super().__init__()
        self.netExtractor = nn.Conv2d(3, 4, 3, 1, 1)
        self.netFlow = nn.Conv2d(6, 2, 3, 1, 1)
        self.netRefine = nn.Sequential(
            nn.LeakyReLU(negative_slope=0.1, inplace=True),
            nn.Conv2d(4, 4, 3, 1, 1),
        )
        self.netOut = nn.Conv2d(8, 3, 3, 1, 1)

    def forward(self, tenOne, tenTwo):
        tenFeat = self.netExtractor(tenOne)
        tenFlow = self.netFlow(torch.cat([tenOne, tenTwo], 1))
        tenWarped = softsplat(tenFeat, tenFlow * 0.5, None, "sum")
        tenRefined = self.netRefine(tenFeat)
        return self.netOut(torch.cat([tenWarped, tenRefined], 1))


net = Synthesis()
tenOne = torch.rand(1, 3, 6, 6)
tenTwo = torch.rand(1, 3, 6, 6)
tenGt = torch.rand(1, 3, 6, 6)
tenEstimate = net(tenOne, tenTwo)
loss = (tenEstimate - tenGt).abs().mean()
loss.backward()
