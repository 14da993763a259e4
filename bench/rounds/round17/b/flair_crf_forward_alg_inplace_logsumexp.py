# label: safe
# why: the CRF forward algorithm subtracts the max in place from a fresh sum (max over a dim keeps only indices) and writes each step into the forward_var buffer through CopySlices, and no backward formula needs an overwritten value, so out-of-place rewrites change nothing.
# source: https://github.com/flairNLP/flair/commit/93fbfd8876f19a2de66665f83e67f6df83aa7051
import torch
import torch.nn as nn

torch.manual_seed(0)

START_TAG, STOP_TAG = "<START>", "<STOP>"


class Dictionary:
    def __init__(self, items):
        self.items = list(items)

    def get_idx_for_item(self, item):
        return self.items.index(item)

    def __len__(self):
        return len(self.items)


def log_sum_exp_batch(vecs):
    maxi = torch.max(vecs, 1)[0]
    maxi_bc = maxi[:, None].repeat(1, vecs.shape[1])
    recti_ = torch.log(torch.sum(torch.exp(vecs - maxi_bc), 1))
    return maxi + recti_


class SequenceTagger(nn.Module):
    def __init__(self, embedding_dim, tag_dictionary):
        super().__init__()
        self.tag_dictionary = tag_dictionary
        self.tagset_size = len(tag_dictionary)
        self.linear = nn.Linear(embedding_dim, self.tagset_size)
        self.transitions = nn.Parameter(torch.randn(self.tagset_size, self.tagset_size))

    def _forward_alg(self, feats, lens_):
        init_alphas = torch.Tensor(self.tagset_size).fill_(-10000.)
        init_alphas[self.tag_dictionary.get_idx_for_item(START_TAG)] = 0.
        forward_var = torch.FloatTensor(feats.shape[0], feats.shape[1] + 1, feats.shape[2]).fill_(0)
        forward_var[:, 0, :] = init_alphas[None, :].repeat(feats.shape[0], 1)
        transitions = self.transitions.view(1, self.transitions.shape[0], self.transitions.shape[1]).repeat(feats.shape[0], 1, 1)
        for i in range(feats.shape[1]):
            emit_score = feats[:, i, :]
            tag_var = \
                emit_score[:, :, None].repeat(1, 1, transitions.shape[2]) + \
                transitions + \
                forward_var[:, i, :][:, :, None].repeat(1, 1, transitions.shape[2]).transpose(2, 1)
            max_tag_var, _ = torch.max(tag_var, dim=2)
            tag_var -= \
                max_tag_var[:, :, None].repeat(1, 1, transitions.shape[2])
            agg_ = torch.log(torch.sum(torch.exp(tag_var), dim=2))
            forward_var[:, i + 1, :] = max_tag_var + agg_
        forward_var = forward_var[range(forward_var.shape[0]), lens_, :]
        terminal_var = forward_var + \
            self.transitions[self.tag_dictionary.get_idx_for_item(STOP_TAG)][None, :].repeat(forward_var.shape[0], 1)
        alpha = log_sum_exp_batch(terminal_var)
        return alpha

    def forward(self, embeddings, lens_):
        feats = self.linear(embeddings)
        return self._forward_alg(feats, lens_)


tags = Dictionary(["O", "B-PER", "I-PER", START_TAG, STOP_TAG])
tagger = SequenceTagger(6, tags)
embeddings = torch.randn(2, 5, 6)
lens_ = torch.tensor([5, 3])
forward_score = tagger(embeddings, lens_)
loss = forward_score.sum()
loss.backward()
