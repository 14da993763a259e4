# label: hazard raises
# why: ArcLinear gathers the target-class cosines from cos_theta_j (gather saves its input for backward) and then adds the angular margin back into cos_theta_j with +=, bumping the version of the tensor gather saved.
# source: https://github.com/pyannote/pyannote-audio/commit/9639da99015a93c1e928ee59807a78d53c9efa58
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ArcLinear(nn.Module):
    """Additive Angular Margin linear module (ArcFace)"""

    def __init__(self, nfeat, nclass, margin, s):
        super(ArcLinear, self).__init__()
        eps = 1e-4
        self.min_cos = eps - 1
        self.max_cos = 1 - eps
        self.nclass = nclass
        self.margin = margin
        self.s = s
        self.W = nn.Parameter(torch.empty(nclass, nfeat))
        nn.init.xavier_uniform_(self.W)

    def forward(self, x, y):
        xnorm = F.normalize(x)
        Wnorm = F.normalize(self.W)
        y = y.long().view(-1, 1)
        cos_theta_j = torch.matmul(xnorm, torch.transpose(Wnorm, 0, 1))
        cos_theta_yi = cos_theta_j.gather(1, y)
        cos_theta_yi = cos_theta_yi.clamp(min=self.min_cos, max=self.max_cos)
        theta_yi = torch.acos(cos_theta_yi)
        cos_theta_yi_margin = torch.cos(theta_yi + self.margin)
        one_hot = torch.zeros_like(cos_theta_j)
        one_hot.scatter_(1, y, 1.0)
        cos_theta_j += one_hot * (cos_theta_yi_margin - cos_theta_yi)  # <-- IPL001: gather saved cos_theta_j for backward
        cos_theta_j = self.s * cos_theta_j
        return cos_theta_j


# speaker-embedding network over MFCC frames
embedder = nn.Sequential(nn.Conv1d(13, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(16, 8))
classifier = ArcLinear(nfeat=8, nclass=5, margin=0.2, s=30.0)

mfcc = torch.randn(6, 13, 40)
speakers = torch.tensor([0, 1, 2, 3, 4, 0])
logits = classifier(embedder(mfcc), speakers)
loss = F.cross_entropy(logits, speakers)
loss.backward()
grad_W = classifier.W.grad.clone()
