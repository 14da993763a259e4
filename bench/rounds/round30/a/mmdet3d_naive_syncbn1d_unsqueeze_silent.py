# label: hazard silent
# why: NaiveSyncBatchNorm1d.forward reshapes a 2-D input with `input.unsqueeze_(2)`, an in-place metadata write on the caller's tensor, so the head that reuses its pre-norm features afterwards (softmax over the last dim for a channel gate) silently works on (N, C, 1) and gets a gate of all ones.
# source: https://github.com/open-mmlab/mmdetection3d/commit/c8c0b5c7f6030d11ea0f4b1fa32adc2efeef4ac3
import torch
import torch.nn as nn

torch.manual_seed(0)


class AllReduce(torch.autograd.Function):
    """Sum over `world_size` identical replicas (stand-in for dist.all_reduce)."""

    world_size = 2

    @staticmethod
    def forward(ctx, input):
        return input * AllReduce.world_size

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * AllReduce.world_size


class NaiveSyncBatchNorm1d(nn.BatchNorm1d):
    """Synchronized Batch Normalization for 3D Tensors."""

    def forward(self, input):
        assert input.dtype == torch.float32, \
            f'input should be in float32 type, got {input.dtype}'
        if AllReduce.world_size == 1 or not self.training:
            return super().forward(input)
        assert input.shape[0] > 0, 'SyncBN does not support empty inputs'
        is_two_dim = input.dim() == 2
        if is_two_dim:
            input.unsqueeze_(2)  # <-- IPL004

        C = input.shape[1]
        mean = torch.mean(input, dim=[0, 2])
        meansqr = torch.mean(input * input, dim=[0, 2])

        vec = torch.cat([mean, meansqr], dim=0)
        vec = AllReduce.apply(vec) * (1.0 / AllReduce.world_size)

        mean, meansqr = torch.split(vec, C)
        var = meansqr - mean * mean
        with torch.no_grad():
            self.running_mean += self.momentum * (mean.detach() - self.running_mean)
            self.running_var += self.momentum * (var.detach() - self.running_var)

        invstd = torch.rsqrt(var + self.eps)
        scale = self.weight * invstd
        bias = self.bias - mean * scale
        scale = scale.reshape(1, -1, 1)
        bias = bias.reshape(1, -1, 1)
        output = input * scale + bias
        if is_two_dim:
            output = output.squeeze(2)
        return output


class ProposalRefineMLP(nn.Module):
    def __init__(self, in_channels=6, channels=8):
        super().__init__()
        self.fc = nn.Linear(in_channels, channels)
        self.norm = NaiveSyncBatchNorm1d(channels)
        self.reg = nn.Linear(channels, 7)

    def forward(self, roi_feats):
        feats = self.fc(roi_feats)
        out = torch.relu(self.norm(feats))
        # channel gate computed from the pre-norm features
        gate = feats.softmax(dim=-1).reshape(out.shape) * out.shape[-1]
        return self.reg(out * gate)


def main():
    head = ProposalRefineMLP()
    roi_feats = torch.randn(5, 6)
    bbox_targets = torch.randn(5, 7)
    bbox_preds = head(roi_feats)
    loss_bbox = (bbox_preds - bbox_targets).abs().mean()
    loss_bbox.backward()
    return loss_bbox.detach(), head.fc.weight.grad


loss_bbox, fc_grad = main()
