# label: safe
# why: logits is the fresh output of cosine_similarity (whose backward keeps only its inputs), so dividing by the temperature and writing -inf at negatives equal to the positive, both in place, matches the out-of-place version
# source: https://github.com/facebookresearch/fairseq/blob/1bba712622b8ae4efb3eb793a8a40da386fe11d0/fairseq/models/wav2vec/wav2vec2.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Wav2Vec2Head(nn.Module):
    def __init__(self, dim=6, final_dim=4, num_negatives=3, logit_temp=0.1):
        super().__init__()
        self.final_proj = nn.Linear(dim, final_dim)
        self.project_q = nn.Linear(dim, final_dim)
        self.n_negatives = num_negatives
        self.logit_temp = logit_temp

    def sample_negatives(self, y, num, neg_idxs):
        bsz, tsz, fsz = y.shape
        y = y.view(-1, fsz)
        negs = y[neg_idxs.view(-1)]
        return negs.view(bsz, num, self.n_negatives, fsz).permute(2, 0, 1, 3)

    def compute_preds(self, x, y, negatives):
        neg_is_pos = (y == negatives).all(-1)
        y = y.unsqueeze(0)
        targets = torch.cat([y, negatives], dim=0)

        logits = torch.cosine_similarity(x.float(), targets.float(), dim=-1).type_as(x)

        logits /= self.logit_temp

        if neg_is_pos.any():
            logits[1:][neg_is_pos] = float("-inf")

        return logits

    def forward(self, context, quantized, neg_idxs):
        y = self.project_q(quantized)
        negs = self.sample_negatives(y, y.size(1), neg_idxs)
        x = self.final_proj(context)
        return self.compute_preds(x, y, negs)


head = Wav2Vec2Head()
context = torch.randn(2, 5, 6)
quantized = torch.randn(2, 5, 6)
neg_idxs = torch.randint(0, 10, (2, 5 * 3))
neg_idxs[0, 0] = 0  # one negative equals its own positive, as happens with the real sampler
logits = head(context, quantized, neg_idxs)
logits_flat = logits.transpose(0, 2).reshape(-1, logits.size(0))
target = logits_flat.new_zeros(logits_flat.size(0), dtype=torch.long)
loss = F.cross_entropy(logits_flat, target)
loss.backward()
