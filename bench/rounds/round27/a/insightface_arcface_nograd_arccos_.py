# label: hazard silent no-twin
# why: ArcFace.forward rewrites the cosine logits in place (arccos_, margin index-put, cos_) inside torch.no_grad(), so the tensor that reaches the loss carries the margin but autograd only saw the plain linear output and backpropagates as if logits were unchanged.
# source: https://github.com/deepinsight/insightface/issues/2309 (recognition/arcface_torch/losses.py at commit 657ae30e41fc53641a50a68694009d0530d9f6b3)
import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)


class ArcFace(torch.nn.Module):
    """ ArcFace (https://arxiv.org/pdf/1801.07698v1.pdf):
    """
    def __init__(self, s=64.0, margin=0.5):
        super(ArcFace, self).__init__()
        self.scale = s
        self.margin = margin
        self.cos_m = math.cos(margin)
        self.sin_m = math.sin(margin)
        self.theta = math.cos(math.pi - margin)
        self.sinmm = math.sin(math.pi - margin) * margin
        self.easy_margin = False

    def forward(self, logits: torch.Tensor, labels: torch.Tensor):
        index = torch.where(labels != -1)[0]
        target_logit = logits[index, labels[index].view(-1)]

        with torch.no_grad():
            target_logit.arccos_()
            logits.arccos_()  # <-- IPL007
            final_target_logit = target_logit + self.margin
            logits[index, labels[index].view(-1)] = final_target_logit  # <-- IPL007
            logits.cos_()  # <-- IPL007
        logits = logits * self.scale
        return logits


class PartialFC(torch.nn.Module):
    def __init__(self, margin_loss, embedding_size, num_classes):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.normal(0, 0.01, (num_classes, embedding_size)))
        self.margin_softmax = margin_loss

    def forward(self, local_embeddings, local_labels):
        norm_embeddings = F.normalize(local_embeddings)
        norm_weight_activated = F.normalize(self.weight)
        logits = F.linear(norm_embeddings, norm_weight_activated)
        logits = logits.clamp(-1, 1)
        logits = self.margin_softmax(logits, local_labels)
        loss = F.cross_entropy(logits, local_labels)
        return loss


def main():
    backbone = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 16))
    module_partial_fc = PartialFC(ArcFace(s=64.0, margin=0.5), embedding_size=16, num_classes=10)
    img = torch.randn(6, 3, 8, 8)
    local_labels = torch.tensor([0, 3, 5, 9, 3, 1])
    local_embeddings = backbone(img)
    loss = module_partial_fc(local_embeddings, local_labels)
    loss.backward()
    return loss.detach(), module_partial_fc.weight.grad, backbone[1].weight.grad


loss, fc_grad, backbone_grad = main()
