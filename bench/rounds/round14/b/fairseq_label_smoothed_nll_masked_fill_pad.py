# label: safe
# why: masked_fill_ zeroes padding positions of nll_loss/smooth_loss, which are fresh outputs of neg/sum that no backward formula saved, so the loss and gradients equal the out-of-place version
# source: https://github.com/facebookresearch/fairseq/blob/3d262bb25690e4eb2e7d3c1309b1e9c406ca4b99/fairseq/criterions/label_smoothed_cross_entropy.py
import torch
import torch.nn as nn

torch.manual_seed(0)


def label_smoothed_nll_loss(lprobs, target, epsilon, ignore_index=None, reduce=True):
    if target.dim() == lprobs.dim() - 1:
        target = target.unsqueeze(-1)
    nll_loss = -lprobs.gather(dim=-1, index=target)
    smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    if ignore_index is not None:
        pad_mask = target.eq(ignore_index)
        nll_loss.masked_fill_(pad_mask, 0.0)
        smooth_loss.masked_fill_(pad_mask, 0.0)
    else:
        nll_loss = nll_loss.squeeze(-1)
        smooth_loss = smooth_loss.squeeze(-1)
    if reduce:
        nll_loss = nll_loss.sum()
        smooth_loss = smooth_loss.sum()
    eps_i = epsilon / (lprobs.size(-1) - 1)
    loss = (1.0 - epsilon - eps_i) * nll_loss + eps_i * smooth_loss
    return loss, nll_loss


class LabelSmoothedCrossEntropyCriterion:
    def __init__(self, label_smoothing=0.1, padding_idx=1):
        self.eps = label_smoothing
        self.padding_idx = padding_idx

    def get_lprobs_and_target(self, net_output, target):
        lprobs = torch.log_softmax(net_output, dim=-1)
        return lprobs.view(-1, lprobs.size(-1)), target.view(-1)

    def compute_loss(self, net_output, target, reduce=True):
        lprobs, target = self.get_lprobs_and_target(net_output, target)
        return label_smoothed_nll_loss(lprobs, target, self.eps, ignore_index=self.padding_idx, reduce=reduce)


decoder = nn.Sequential(nn.Embedding(12, 8), nn.Linear(8, 12))
prev_output_tokens = torch.randint(2, 12, (3, 5))
target = torch.randint(2, 12, (3, 5))
target[0, 3:] = 1  # padding
target[2, 4:] = 1
criterion = LabelSmoothedCrossEntropyCriterion()
net_output = decoder(prev_output_tokens)
loss, nll_loss = criterion.compute_loss(net_output, target)
loss.backward()
