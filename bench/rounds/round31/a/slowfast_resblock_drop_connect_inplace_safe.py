# label: safe
# why: SlowFast's ResBlock._drop_connect scales the branch output in place (`x.div_(keep_ratio); x.mul_(mask)`), but that tensor is the output of the final BatchNorm c_bn, which autograd does not save, and the mask needs no grad, so gradients match the out-of-place drop_path that later replaced it.
# source: https://github.com/facebookresearch/SlowFast/commit/5324725c86b04d72ef047a73e1f95ff1a979812d
import torch
import torch.nn as nn

torch.manual_seed(0)


class BottleneckTransform(nn.Module):
    """Bottleneck transformation: Tx1x1, 1x3x3, 1x1x1."""

    def __init__(self, dim_in, dim_out, temp_kernel_size, stride, dim_inner, num_groups,
                 stride_1x1=False, inplace_relu=True, eps=1e-5, bn_mmt=0.1, dilation=1,
                 norm_module=nn.BatchNorm3d):
        super(BottleneckTransform, self).__init__()
        self.temp_kernel_size = temp_kernel_size
        self._inplace_relu = inplace_relu
        self._eps = eps
        self._bn_mmt = bn_mmt
        self._stride_1x1 = stride_1x1
        self._construct(dim_in, dim_out, stride, dim_inner, num_groups, dilation, norm_module)

    def _construct(self, dim_in, dim_out, stride, dim_inner, num_groups, dilation, norm_module):
        (str1x1, str3x3) = (stride, 1) if self._stride_1x1 else (1, stride)
        self.a = nn.Conv3d(dim_in, dim_inner, kernel_size=[self.temp_kernel_size, 1, 1],
                           stride=[1, str1x1, str1x1], padding=[int(self.temp_kernel_size // 2), 0, 0], bias=False)
        self.a_bn = norm_module(num_features=dim_inner, eps=self._eps, momentum=self._bn_mmt)
        self.a_relu = nn.ReLU(inplace=self._inplace_relu)
        self.b = nn.Conv3d(dim_inner, dim_inner, [1, 3, 3], stride=[1, str3x3, str3x3],
                           padding=[0, dilation, dilation], groups=num_groups, bias=False,
                           dilation=[1, dilation, dilation])
        self.b_bn = norm_module(num_features=dim_inner, eps=self._eps, momentum=self._bn_mmt)
        self.b_relu = nn.ReLU(inplace=self._inplace_relu)
        self.c = nn.Conv3d(dim_inner, dim_out, kernel_size=[1, 1, 1], stride=[1, 1, 1], padding=[0, 0, 0], bias=False)
        self.c_bn = norm_module(num_features=dim_out, eps=self._eps, momentum=self._bn_mmt)
        self.c_bn.transform_final_bn = True

    def forward(self, x):
        # Branch2a.
        x = self.a(x)
        x = self.a_bn(x)
        x = self.a_relu(x)
        # Branch2b.
        x = self.b(x)
        x = self.b_bn(x)
        x = self.b_relu(x)
        # Branch2c
        x = self.c(x)
        x = self.c_bn(x)
        return x


class ResBlock(nn.Module):
    def __init__(self, dim_in, dim_out, temp_kernel_size, stride, trans_func, dim_inner, num_groups=1,
                 stride_1x1=False, inplace_relu=True, eps=1e-5, bn_mmt=0.1, dilation=1,
                 norm_module=nn.BatchNorm3d, drop_connect_rate=0.0):
        super(ResBlock, self).__init__()
        self._inplace_relu = inplace_relu
        self._eps = eps
        self._bn_mmt = bn_mmt
        self._drop_connect_rate = drop_connect_rate
        if (dim_in != dim_out) or (stride != 1):
            self.branch1 = nn.Conv3d(dim_in, dim_out, kernel_size=1, stride=[1, stride, stride], padding=0,
                                     bias=False, dilation=1)
            self.branch1_bn = norm_module(num_features=dim_out, eps=self._eps, momentum=self._bn_mmt)
        self.branch2 = trans_func(dim_in, dim_out, temp_kernel_size, stride, dim_inner, num_groups,
                                  stride_1x1=stride_1x1, inplace_relu=inplace_relu, dilation=dilation,
                                  norm_module=norm_module)
        self.relu = nn.ReLU(self._inplace_relu)

    def _drop_connect(self, x, drop_ratio):
        """Apply dropconnect to x"""
        keep_ratio = 1.0 - drop_ratio
        mask = torch.empty([x.shape[0], 1, 1, 1, 1], dtype=x.dtype, device=x.device)
        mask.bernoulli_(keep_ratio)
        x.div_(keep_ratio)
        x.mul_(mask)
        return x

    def forward(self, x):
        f_x = self.branch2(x)
        if self.training and self._drop_connect_rate > 0.0:
            f_x = self._drop_connect(f_x, self._drop_connect_rate)
        if hasattr(self, "branch1"):
            x = self.branch1_bn(self.branch1(x)) + f_x
        else:
            x = x + f_x
        x = self.relu(x)
        return x


class ResStage(nn.Module):
    def __init__(self, dim_in, dim_out, dim_inner, num_blocks, drop_connect_rate=0.0):
        super().__init__()
        self.blocks = nn.ModuleList()
        for i in range(num_blocks):
            self.blocks.append(
                ResBlock(dim_in if i == 0 else dim_out, dim_out, 3, 2 if i == 0 else 1, BottleneckTransform,
                         dim_inner, drop_connect_rate=drop_connect_rate)
            )

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class TinyX3D(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv3d(3, 8, [1, 3, 3], padding=[0, 1, 1], bias=False), nn.BatchNorm3d(8), nn.ReLU(True))
        self.s2 = ResStage(8, 16, 8, num_blocks=2, drop_connect_rate=0.5)
        self.head = nn.Linear(16, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.s2(x)
        x = x.mean(dim=(2, 3, 4))
        return self.head(x)


def main():
    model = TinyX3D()
    model.train()
    clips = torch.randn(4, 3, 4, 8, 8)
    labels = torch.tensor([0, 1, 2, 3])
    logits = model(clips)
    loss = nn.functional.cross_entropy(logits, labels)
    loss.backward()
    return loss.detach(), model.s2.blocks[0].branch2.c.weight.grad, model.stem[0].weight.grad


loss, c_grad, stem_grad = main()
