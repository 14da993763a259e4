# label: hazard raises
# why: with sync_bg the semantic bbox head writes the learned background vector into self.vec[:, 0] (under no_grad, which still bumps the version) before torch.mm(semantic_score, self.vec) saves self.vec; calling the head a second time for the synthesized features overwrites it again, so backward of the first call's loss fails.
# source: https://github.com/zhengye1995/Zero-shot-Instance-Segmentation/issues/30 (mmdet/models/bbox_heads/convfc_bbox_semantic_head.py at commit 856920996f7973dc3981cc78a43b22de93ec1e55)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvFCSemanticBBoxHead(nn.Module):
    def __init__(self, in_channels=4, roi_feat_size=2, fc_out_channels=8, semantic_dims=6,
                 num_classes=4, voc_size=5, sync_bg=True, seen_class=True):
        super().__init__()
        self.sync_bg = sync_bg
        self.seen_class = seen_class
        self.relu = nn.ReLU(inplace=True)
        self.shared_fcs = nn.ModuleList([nn.Linear(in_channels * roi_feat_size * roi_feat_size, fc_out_channels)])
        self.fc_semantic = nn.Linear(fc_out_channels, semantic_dims)
        self.fc_reg = nn.Linear(fc_out_channels, 4 * num_classes)
        self.voc = torch.randn(semantic_dims, voc_size)      # word vectors of the vocabulary
        self.vec = torch.randn(semantic_dims, num_classes)   # word vectors of the seen classes, column 0 = background
        self.vec_unseen = torch.randn(semantic_dims, 2)
        self.kernel_semantic = nn.Linear(voc_size, semantic_dims)

    def forward(self, x, bg_vector=None):
        x = x.view(x.size(0), -1)
        for fc in self.shared_fcs:
            x = self.relu(fc(x))
        x_semantic = x
        x_reg = x

        semantic_feature = self.fc_semantic(x_semantic)
        if self.sync_bg:
            with torch.no_grad():
                self.vec[:, 0] = bg_vector  # <-- IPL001: self.vec is saved by the torch.mm below of the previous call
                if not self.seen_class:
                    self.vec_unseen[:, 0] = bg_vector
        semantic_score = torch.mm(semantic_feature, self.voc)
        semantic_score = self.kernel_semantic(semantic_score)
        semantic_score = torch.mm(semantic_score, self.vec)

        bbox_pred = self.fc_reg(x_reg)
        return semantic_score, bbox_pred


class BackgroundLearner(nn.Module):
    def __init__(self, in_channels=4, semantic_dims=6):
        super().__init__()
        self.fc = nn.Linear(in_channels, semantic_dims)

    def forward(self, feats):
        return self.fc(feats.mean(dim=(2, 3)))


bbox_head = ConvFCSemanticBBoxHead()
bg_learner = BackgroundLearner()

bbox_feats = torch.randn(5, 4, 2, 2)
sum_feats = torch.randn(5, 4, 2, 2)
labels = torch.tensor([0, 1, 2, 3, 1])

bg_vector = bg_learner(bbox_feats)
cls_score, bbox_pred = bbox_head(bbox_feats, bg_vector=bg_vector[0].view([6, ]))
sum_cls_score, sum_bbox_pred = bbox_head(sum_feats, bg_vector=bg_vector[0].view([6, ]))

loss_semantic = F.cross_entropy(cls_score, labels)
loss_sum_semantic = F.cross_entropy(sum_cls_score, labels)
loss_bbox = bbox_pred.abs().mean() + sum_bbox_pred.abs().mean()
loss = loss_semantic + loss_sum_semantic + loss_bbox
loss.backward()
