# label: hazard raises
# why: AdaptiveSoftmax.get_log_prob writes each tail cluster as `self.lsm(tail_out).add_(tail_priors[...])`, adding the cluster prior in place to the LogSoftmax output that LogSoftmaxBackward saved; the label-smoothed adaptive loss differentiates through get_log_prob, so its backward raises (the commit adds a backward test and switches to `.add(`).
# source: https://github.com/facebookresearch/fairseq/commit/1234818b8293bac0286038c60253ffb1896804f7
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class AdaptiveSoftmax(nn.Module):
    """
    This is an implementation of the efficient softmax approximation for
    graphical processing units (GPU), described in the paper "Efficient softmax
    approximation for GPUs" (http://arxiv.org/abs/1609.04309).
    """

    def __init__(self, vocab_size, input_dim, cutoff, dropout):
        super().__init__()

        if vocab_size > cutoff[-1]:
            cutoff = cutoff + [vocab_size]
        else:
            assert vocab_size == cutoff[-1], 'cannot specify cutoff smaller than vocab size'

        output_dim = cutoff[0] + len(cutoff) - 1

        self.vocab_size = vocab_size
        self.cutoff = cutoff
        self.dropout = dropout

        self.lsm = nn.LogSoftmax(dim=1)
        self.head = nn.Linear(input_dim, output_dim, bias=False)
        self.tail = nn.ModuleList()

        for i in range(len(cutoff) - 1):
            self.tail.append(
                nn.Sequential(
                    nn.Linear(input_dim, input_dim // 4 ** i, bias=False),
                    nn.Dropout(dropout),
                    nn.Linear(input_dim // 4 ** i, cutoff[i + 1] - cutoff[i], bias=False)
                )
            )

        def init_weights(m):
            if hasattr(m, 'weight'):
                nn.init.xavier_uniform_(m.weight)

        self.apply(init_weights)

    def adapt_target(self, target):
        target = target.view(-1)
        new_target = [target.clone()]
        target_idxs = []

        for i in range(len(self.cutoff) - 1):
            mask = target.ge(self.cutoff[i]).mul(target.lt(self.cutoff[i + 1]))
            new_target[0][mask] = self.cutoff[0] + i - 1

            if mask.any():
                target_idxs.append(mask.nonzero().squeeze(1))
                new_target.append(target[mask].add(-self.cutoff[i]))
            else:
                target_idxs.append(None)
                new_target.append(None)

        return new_target, target_idxs

    def forward(self, input, target):
        input = input.contiguous().view(-1, input.size(-1))
        input = F.dropout(input, p=self.dropout, training=self.training)

        new_target, target_idxs = self.adapt_target(target)
        output = [self.head(input)]

        for i in range(len(target_idxs)):
            if target_idxs[i] is not None:
                output.append(self.tail[i](input.index_select(0, target_idxs[i])))
            else:
                output.append(None)

        return output, new_target

    def get_log_prob(self, input, target):
        """
        Computes the log probabilities for all the words of the vocabulary,
        given a 2D tensor of hidden vectors.
        """
        bsz, length, dim = input.size()
        input = input.contiguous().view(-1, dim)

        if target is not None:
            _, target_idxs = self.adapt_target(target)
        else:
            target_idxs = None

        head_y = self.head(input)
        log_probs = head_y.new_zeros(input.size(0), self.vocab_size)

        head_sz = self.cutoff[0] + len(self.tail)
        log_probs[:, :head_sz] = self.lsm(head_y)
        tail_priors = log_probs[:, self.cutoff[0] - 1: head_sz - 1].clone()

        for i in range(len(self.tail)):
            start = self.cutoff[i]
            end = self.cutoff[i + 1]

            if target_idxs is None:
                tail_out = log_probs[:, start:end]
                tail_out.copy_(self.tail[i](input))
                log_probs[:, start:end] = self.lsm(tail_out).add_(tail_priors[:, i, None])  # <-- IPL001
            elif target_idxs[i] is not None:
                idxs = target_idxs[i]
                tail_out = log_probs[idxs, start:end]
                tail_out.copy_(self.tail[i](input[idxs]))
                log_probs[idxs, start:end] = self.lsm(tail_out).add_(tail_priors[idxs, i, None])  # <-- IPL001

        log_probs = log_probs.view(bsz, length, -1)
        return log_probs


class LMDecoder(nn.Module):
    """A small decoder whose output layer is an adaptive softmax (fairseq FairseqDecoder API)."""

    def __init__(self, vocab_size, embed_dim, cutoff, dropout=0.0):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, embed_dim)
        self.layer = nn.Linear(embed_dim, embed_dim)
        self.adaptive_softmax = AdaptiveSoftmax(vocab_size, embed_dim, cutoff, dropout)

    def forward(self, prev_output_tokens):
        x = self.embed_tokens(prev_output_tokens)
        x = torch.tanh(self.layer(x))
        return x, {'attn': None}

    def get_normalized_probs(self, net_output, log_probs, sample):
        """Get normalized probabilities (or log probs) from a net's output."""
        if hasattr(self, 'adaptive_softmax') and self.adaptive_softmax is not None:
            assert sample is not None and 'target' in sample
            out = self.adaptive_softmax.get_log_prob(net_output[0], sample['target'])
            return out.exp_() if not log_probs else out
        logits = net_output[0].float()
        if log_probs:
            return F.log_softmax(logits, dim=-1)
        return F.softmax(logits, dim=-1)


class LanguageModel(nn.Module):
    def __init__(self, decoder):
        super().__init__()
        self.decoder = decoder

    def forward(self, src_tokens):
        return self.decoder(src_tokens)

    def get_targets(self, sample, net_output):
        return sample['target']

    def get_normalized_probs(self, net_output, log_probs, sample=None):
        return self.decoder.get_normalized_probs(net_output, log_probs, sample)


class AdaptiveLoss:
    def __init__(self, padding_idx):
        self.padding_idx = padding_idx

    def compute_cross_entropy_loss(self, model, net_output, sample, reduce=True):
        """Compute the cross_entropy loss from the net_output."""
        target = model.get_targets(sample, net_output).view(-1)
        bsz = target.size(0)

        adaptive_softmax = model.decoder.adaptive_softmax
        logits, target = adaptive_softmax(net_output[0], target)
        assert len(target) == len(logits)

        loss = net_output[0].new(1 if reduce else bsz).zero_()

        for i in range(len(target)):
            if target[i] is not None:
                assert (target[i].min() >= 0 and target[i].max() <= logits[i].size(1))
                loss += F.cross_entropy(logits[i], target[i], ignore_index=self.padding_idx,
                                        reduction='sum' if reduce else 'none')
        return loss


class LabelSmoothedAdaptiveLoss(AdaptiveLoss):
    """This enables label smoothing added on top of AdaptiveLoss Criterion."""

    def __init__(self, padding_idx, label_smoothing):
        super().__init__(padding_idx)
        self.eps = label_smoothing

    def forward(self, model, sample, reduce=True):
        net_output = model(**sample['net_input'])
        cross_entropy = self.compute_cross_entropy_loss(model, net_output, sample, reduce)
        smooth_loss = self.compute_smooth_loss(model, net_output, sample, reduce=reduce)
        loss = (1. - self.eps) * cross_entropy + smooth_loss
        logging_output = {
            'loss': loss.item(),
            'cross_entropy': cross_entropy.item(),
            'ntokens': sample['ntokens'],
        }
        return loss, sample['ntokens'], logging_output

    def compute_smooth_loss(self, model, net_output, sample, reduce=True):
        """Helper function to compute the smoothed loss."""
        target = model.get_targets(sample, net_output).view(-1, 1)
        non_pad_mask = target.ne(self.padding_idx)

        lprobs = model.get_normalized_probs(net_output, log_probs=True, sample=sample)
        lprobs = lprobs.view(-1, lprobs.size(-1))

        smooth_loss = -lprobs.sum(dim=-1, keepdim=True)[non_pad_mask]
        eps_i = self.eps / lprobs.size(-1)
        if reduce:
            smooth_loss = smooth_loss.sum()
        return smooth_loss * eps_i


def train_step(model, criterion, optimizer, sample):
    optimizer.zero_grad()
    loss, sample_size, logging_output = criterion.forward(model, sample)
    (loss / sample_size).backward()
    optimizer.step()
    return loss.detach(), logging_output


vocab_size, embed_dim = 20, 16
model = LanguageModel(LMDecoder(vocab_size, embed_dim, cutoff=[8, 14], dropout=0.0))
criterion = LabelSmoothedAdaptiveLoss(padding_idx=1, label_smoothing=0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
src_tokens = torch.randint(2, vocab_size, (3, 7))
target = torch.cat([src_tokens[:, 1:], torch.randint(2, vocab_size, (3, 1))], dim=1)
sample = {'net_input': {'src_tokens': src_tokens}, 'target': target, 'ntokens': target.numel()}
loss, logging_output = train_step(model, criterion, optimizer, sample)
