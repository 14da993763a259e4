# label: safe
# why: CosFace.forward writes the margin-shifted target logits back into logits with an index assignment under grad mode; logits is a fresh clamp output that no backward formula saved and target_logit is an advanced-indexing copy, so autograd records the write and gradients stay correct.
# source: https://github.com/deepinsight/insightface/issues/2309 (recognition/arcface_torch/losses.py at commit 657ae30e41fc53641a50a68694009d0530d9f6b3)
import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)


class CosFace(torch.nn.Module):
    def __init__(self, s=64.0, m=0.40):
        super(CosFace, self).__init__()
        self.s = s
        self.m = m

    def forward(self, logits: torch.Tensor, labels: torch.Tensor):
        index = torch.where(labels != -1)[0]
        target_logit = logits[index, labels[index].view(-1)]
        final_target_logit = target_logit - self.m
        logits[index, labels[index].view(-1)] = final_target_logit
        logits = logits * self.s
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
    module_partial_fc = PartialFC(CosFace(s=64.0, m=0.40), embedding_size=16, num_classes=10)
    img = torch.randn(6, 3, 8, 8)
    local_labels = torch.tensor([0, 3, 5, 9, 3, 1])
    local_embeddings = backbone(img)
    loss = module_partial_fc(local_embeddings, local_labels)
    loss.backward()
    return loss.detach(), module_partial_fc.weight.grad, backbone[1].weight.grad


loss, fc_grad, backbone_grad = main()
