# label: safe
# why: the masked assignment, scatter_ and *= all write to the clamp output, whose backward (and that of the indexing reads) does not need its old values, so gradients equal the out-of-place version.
# source: https://github.com/xiaoboCASIA/SV-X-Softmax/issues/9 (code: https://github.com/xiaoboCASIA/SV-X-Softmax/blob/de3a82d7b68879ddbd653a733fe2917a4840826a/fc_layers.py)
import math
import torch
import torch.nn.functional as F
from torch.nn import Module, Parameter

torch.manual_seed(0)


class FC(Module):
    def __init__(self, fc_type='MV-AM', margin=0.35, t=0.2, scale=32, embedding_size=8, num_class=6,
                 easy_margin=True):
        super(FC, self).__init__()
        # initial kernel
        self.weight = Parameter(torch.Tensor(embedding_size, num_class).uniform_(-1, 1).renorm_(2, 1, 1e-5).mul_(1e5))
        self.margin = margin
        self.t = t
        self.easy_margin = easy_margin
        self.scale = scale
        self.fc_type = fc_type
        self.cos_m = math.cos(margin)
        self.sin_m = math.sin(margin)

    def forward(self, x, label):
        kernel_norm = F.normalize(self.weight, dim=0)
        cos_theta = torch.mm(x, kernel_norm)
        cos_theta = cos_theta.clamp(-1, 1)
        batch_size = label.size(0)
        gt = cos_theta[torch.arange(0, batch_size), label].view(-1, 1)

        if self.fc_type == 'MV-AM':
            mask = cos_theta > gt - self.margin
            hard_vector = cos_theta[mask]
            cos_theta[mask] = (self.t + 1.0) * hard_vector + self.t
            if self.easy_margin:
                final_gt = torch.where(gt > 0, gt - self.margin, gt)
            else:
                final_gt = gt - self.margin
        elif self.fc_type == 'MV-Arc':
            sin_theta = torch.sqrt(1.0 - torch.pow(gt, 2))
            cos_theta_m = gt * self.cos_m - sin_theta * self.sin_m
            mask = cos_theta > cos_theta_m
            hard_vector = cos_theta[mask]
            cos_theta[mask] = (self.t + 1.0) * hard_vector + self.t
            if self.easy_margin:
                final_gt = torch.where(gt > 0, cos_theta_m, gt)
            else:
                final_gt = cos_theta_m
        else:
            raise Exception('unknown fc type!')

        cos_theta.scatter_(1, label.data.view(-1, 1), final_gt)
        cos_theta *= self.scale
        return cos_theta


backbone = torch.nn.Linear(10, 8)
head = FC('MV-AM')
head_arc = FC('MV-Arc')
images = torch.randn(4, 10)
label = torch.tensor([0, 2, 4, 5])
embedding = F.normalize(backbone(images), dim=1)
output = head(embedding, label)
output_arc = head_arc(embedding, label)
loss = F.cross_entropy(output, label) + F.cross_entropy(output_arc, label)
loss.backward()
