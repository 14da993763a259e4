# label: safe no-twin
# why: SoftmaxFocalLossFunction normalises a freshly computed input_softmax in place (exp_, /=) in forward and scales a freshly allocated grad_input in place (*= grad_output, /= N) in backward; neither the autograd input nor grad_output is written, so gradients are exact (no-twin: the ext kernels fill caller-provided output buffers).
# source: https://github.com/open-mmlab/mmcv/blob/07a25f34b9024f5ac91efa134f38e7775a7546db/mmcv/ops/focal_loss.py
import torch
import torch.nn as nn
from torch.autograd import Function

torch.manual_seed(0)

FLT_MIN = 1.17549435e-38


class _ExtModule:
    """CPU stand-in for mmcv's compiled softmax focal loss kernels (they write into output buffers)."""

    @staticmethod
    def softmax_focal_loss_forward(softmax, target, weight, output, gamma, alpha):
        pred = softmax.gather(1, target.unsqueeze(1)).squeeze(1)
        loss = -alpha * (1 - pred).pow(gamma) * torch.log(pred.clamp(min=FLT_MIN))
        if weight.numel() > 0:
            loss = loss * weight[target]
        output.copy_(loss)

    @staticmethod
    def softmax_focal_loss_backward(softmax, target, weight, buff, grad_input, gamma, alpha):
        pred = softmax.gather(1, target.unsqueeze(1)).squeeze(1)
        b = (-(1 - pred).pow(gamma) + gamma * (1 - pred).pow(gamma - 1) * pred * torch.log(pred.clamp(min=FLT_MIN))) * alpha
        if weight.numel() > 0:
            b = b * weight[target]
        buff.copy_(b)
        flag = torch.zeros_like(softmax).scatter_(1, target.unsqueeze(1), 1.0)
        grad_input.copy_(buff.unsqueeze(1) * (flag - softmax))


ext_module = _ExtModule()


class SoftmaxFocalLossFunction(Function):

    @staticmethod
    def forward(ctx, input, target, gamma=2.0, alpha=0.25, weight=None, reduction='mean'):
        assert input.dim() == 2
        assert target.dim() == 1
        assert input.size(0) == target.size(0)
        if weight is None:
            weight = input.new_empty(0)
        ctx.reduction_dict = {'none': 0, 'mean': 1, 'sum': 2}
        ctx.gamma = float(gamma)
        ctx.alpha = float(alpha)
        ctx.reduction = ctx.reduction_dict[reduction]

        channel_stats, _ = torch.max(input, dim=1)
        input_softmax = input - channel_stats.unsqueeze(1).expand_as(input)
        input_softmax.exp_()

        channel_stats = input_softmax.sum(dim=1)
        input_softmax /= channel_stats.unsqueeze(1).expand_as(input)

        output = input.new_zeros(input.size(0))
        ext_module.softmax_focal_loss_forward(
            input_softmax, target, weight, output, gamma=ctx.gamma, alpha=ctx.alpha)

        if ctx.reduction == ctx.reduction_dict['mean']:
            output = output.sum() / input.size(0)
        elif ctx.reduction == ctx.reduction_dict['sum']:
            output = output.sum()
        ctx.save_for_backward(input_softmax, target, weight)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input_softmax, target, weight = ctx.saved_tensors
        buff = input_softmax.new_zeros(input_softmax.size(0))
        grad_input = input_softmax.new_zeros(input_softmax.size())

        ext_module.softmax_focal_loss_backward(
            input_softmax, target, weight, buff, grad_input, gamma=ctx.gamma, alpha=ctx.alpha)

        grad_input *= grad_output
        if ctx.reduction == ctx.reduction_dict['mean']:
            grad_input /= input_softmax.size(0)
        return grad_input, None, None, None, None, None


softmax_focal_loss = SoftmaxFocalLossFunction.apply


class SoftmaxFocalLoss(nn.Module):

    def __init__(self, gamma, alpha, weight=None, reduction='mean'):
        super().__init__()
        self.gamma = gamma
        self.alpha = alpha
        self.register_buffer('weight', weight)
        self.reduction = reduction

    def forward(self, input, target):
        return softmax_focal_loss(input, target, self.gamma, self.alpha, self.weight, self.reduction)


def main():
    cls_head = nn.Sequential(nn.Linear(16, 32), nn.ReLU(inplace=True), nn.Linear(32, 5))
    roi_feats = torch.randn(12, 16)
    labels = torch.randint(0, 5, (12,))
    criterion = SoftmaxFocalLoss(gamma=2.0, alpha=0.25)
    cls_score = cls_head(roi_feats)
    loss_cls = criterion(cls_score, labels) * 2.0
    loss_cls.backward()
    return loss_cls.detach(), cls_head[0].weight.grad


loss_cls, head_grad = main()
