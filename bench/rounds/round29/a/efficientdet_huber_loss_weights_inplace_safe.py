# label: safe
# why: in eager mode `loss *= weights` scales a fresh non-leaf sum whose producers saved nothing that is overwritten (the boolean mask does not require grad), so the box-regression gradient is unchanged; the reported failure only appeared under TorchScript.
# source: https://github.com/rwightman/efficientdet-pytorch/pull/276 (commit 6b0b60478d, effdet/loss.py huber_loss)
import torch
import torch.nn as nn

torch.manual_seed(0)


def huber_loss(
        input, target, delta: float = 1., weights=None, size_average: bool = True):
    err = input - target
    abs_err = err.abs()
    quadratic = torch.clamp(abs_err, max=delta)
    linear = abs_err - quadratic
    loss = 0.5 * quadratic.pow(2) + delta * linear
    if weights is not None:
        loss *= weights
    if size_average:
        return loss.mean()
    else:
        return loss.sum()


def _box_loss(box_outputs, box_targets, num_positives, delta: float = 0.1):
    normalizer = num_positives * 4.0
    mask = box_targets != 0.0
    box_loss = huber_loss(box_outputs, box_targets, weights=mask, delta=delta, size_average=False)
    return box_loss / normalizer


def main():
    box_net = nn.Conv2d(8, 4 * 9, 3, padding=1)
    feats = [torch.randn(2, 8, 8, 8), torch.randn(2, 8, 4, 4)]
    box_outputs = [box_net(f) for f in feats]
    box_losses = []
    num_positives_sum = torch.tensor(5.0)
    for l in range(len(box_outputs)):
        bs, _, h, w = box_outputs[l].shape
        box_targets_at_level = torch.randn(bs, h, w, 4 * 9) * (torch.rand(bs, h, w, 4 * 9) > 0.7)
        box_losses.append(_box_loss(
            box_outputs[l].permute(0, 2, 3, 1).float(),
            box_targets_at_level,
            num_positives_sum,
            delta=0.1))
    box_loss = torch.sum(torch.stack(box_losses, dim=-1), dim=-1)
    box_loss.backward()
    return box_loss.detach(), box_net.weight.grad.clone()


box_loss, grad = main()
