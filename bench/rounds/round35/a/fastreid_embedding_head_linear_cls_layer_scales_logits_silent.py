# label: hazard silent
# why: With the plain `Linear` cls layer (bag-of-tricks config), any_softmax.Linear.forward returns `logits.mul_(self.s)`, scaling EmbeddingHead's own logits in place; the head then reports `pred_class_logits = logits.mul(self.cls_layer.s)`, i.e. logits scaled twice, so the softmax probabilities logged for training are wrong (the commit passes `logits.clone()`).
# source: https://github.com/JDAI-CV/fast-reid/commit/6300bd756e341ca180c60b8e07c218b9eb40664a
import types

import torch
import torch.nn.functional as F
from torch import nn


class Linear(nn.Module):
    def __init__(self, num_classes, scale, margin):
        super().__init__()
        self.num_classes = num_classes
        self.s = scale
        self.m = margin

    def forward(self, logits, targets):
        return logits.mul_(self.s)  # <-- IPL004

    def extra_repr(self):
        return f"num_classes={self.num_classes}, scale={self.s}, margin={self.m}"


any_softmax = types.SimpleNamespace(Linear=Linear)


class GlobalAvgPool(nn.AdaptiveAvgPool2d):
    def __init__(self, output_size=1, *args, **kwargs):
        super().__init__(output_size)


pooling = types.SimpleNamespace(GlobalAvgPool=GlobalAvgPool)


def get_norm(norm, out_channels, bias_freeze=False):
    bn = nn.BatchNorm2d(out_channels)
    if bias_freeze:
        bn.bias.requires_grad_(False)
    return bn


class EmbeddingHead(nn.Module):
    def __init__(self, *, feat_dim, embedding_dim, num_classes, neck_feat, pool_type, cls_type, scale,
                 margin, with_bnneck, norm_type):
        super().__init__()

        # Pooling layer
        assert hasattr(pooling, pool_type), "Expected pool types are {}, " \
                                            "but got {}".format(pooling.__all__, pool_type)
        self.pool_layer = getattr(pooling, pool_type)()

        self.neck_feat = neck_feat

        neck = []
        if embedding_dim > 0:
            neck.append(nn.Conv2d(feat_dim, embedding_dim, 1, 1, bias=False))
            feat_dim = embedding_dim

        if with_bnneck:
            neck.append(get_norm(norm_type, feat_dim, bias_freeze=True))

        self.bottleneck = nn.Sequential(*neck)

        # Linear layer
        self.weight = nn.Parameter(torch.normal(0, 0.01, (num_classes, feat_dim)))
        self.cls_layer = getattr(any_softmax, cls_type)(num_classes, scale, margin)

    def forward(self, features, targets=None):
        pool_feat = self.pool_layer(features)
        neck_feat = self.bottleneck(pool_feat)
        neck_feat = neck_feat[..., 0, 0]

        # Evaluation
        # fmt: off
        if not self.training: return neck_feat
        # fmt: on

        # Training
        if self.cls_layer.__class__.__name__ == 'Linear':
            logits = F.linear(neck_feat, self.weight)
        else:
            logits = F.linear(F.normalize(neck_feat), F.normalize(self.weight))

        cls_outputs = self.cls_layer(logits, targets)

        # fmt: off
        if self.neck_feat == 'before':  feat = pool_feat[..., 0, 0]
        elif self.neck_feat == 'after': feat = neck_feat
        else:                           raise KeyError(f"{self.neck_feat} is invalid for MODEL.HEADS.NECK_FEAT")
        # fmt: on

        return {
            "cls_outputs": cls_outputs,
            "pred_class_logits": logits.mul(self.cls_layer.s),
            "features": feat,
        }


class Baseline(nn.Module):
    def __init__(self, num_classes=8):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
        )
        self.heads = EmbeddingHead(feat_dim=32, embedding_dim=0, num_classes=num_classes, neck_feat='before',
                                   pool_type='GlobalAvgPool', cls_type='Linear', scale=16, margin=0.0,
                                   with_bnneck=True, norm_type='BN')

    def forward(self, images, targets):
        features = self.backbone(images)
        return self.heads(features, targets)


def log_accuracy(pred_class_logits, gt_classes, topk=(1,)):
    maxk = max(topk)
    _, pred_class = pred_class_logits.topk(maxk, 1, True, True)
    pred_class = pred_class.t()
    correct = pred_class.eq(gt_classes.view(1, -1).expand_as(pred_class))
    return correct[:1].reshape(-1).float().mean()


def cross_entropy_loss(pred_class_outputs, gt_classes, eps=0.1, alpha=0.2):
    num_classes = pred_class_outputs.size(1)
    log_probs = F.log_softmax(pred_class_outputs, dim=1)
    with torch.no_grad():
        targets = torch.ones_like(log_probs)
        targets *= eps / (num_classes - 1)
        targets.scatter_(1, gt_classes.data.unsqueeze(1), (1 - eps))
    return (-targets * log_probs).sum(dim=1).mean()


def main():
    torch.manual_seed(0)
    model = Baseline(num_classes=8)
    model.train()
    images = torch.randn(6, 3, 32, 16)
    targets = torch.tensor([0, 1, 2, 3, 4, 5])
    outputs = model(images, targets)
    loss = cross_entropy_loss(outputs["cls_outputs"], targets)
    loss.backward()
    pred_class_logits = outputs["pred_class_logits"]
    train_prob = F.softmax(pred_class_logits, dim=1)
    acc = log_accuracy(pred_class_logits, targets)
    return loss, pred_class_logits, train_prob, acc, model


loss, pred_class_logits, train_prob, acc, model = main()
print(float(loss), float(acc))
