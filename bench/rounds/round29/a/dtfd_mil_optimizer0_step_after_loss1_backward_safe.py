# label: safe no-twin
# why: the fix proposed in the issue calls optimizer0.step() only after loss1.backward(), so the tier-1 weights saved by both graphs are still at their forward-time version when each backward runs.
# source: https://github.com/hrzhang1123/DTFD-MIL/issues/8 (Main_DTFD_MIL.py train_attention_preFeature_DTFD)
import random
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)


class Classifier_1fc(nn.Module):
    def __init__(self, n_channels, n_classes, droprate=0.0):
        super(Classifier_1fc, self).__init__()
        self.fc = nn.Linear(n_channels, n_classes)

    def forward(self, x):
        return self.fc(x)


class DimReduction(nn.Module):
    def __init__(self, n_channels, m_dim=16):
        super(DimReduction, self).__init__()
        self.fc1 = nn.Linear(n_channels, m_dim, bias=False)
        self.relu1 = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.fc1(x)
        x = self.relu1(x)
        return x


class Attention_Gated(nn.Module):
    def __init__(self, L=16, D=8, K=1):
        super(Attention_Gated, self).__init__()
        self.attention_V = nn.Sequential(nn.Linear(L, D), nn.Tanh())
        self.attention_U = nn.Sequential(nn.Linear(L, D), nn.Sigmoid())
        self.attention_weights = nn.Linear(D, K)

    def forward(self, x, isNorm=True):
        A_V = self.attention_V(x)
        A_U = self.attention_U(x)
        A = self.attention_weights(A_V * A_U)
        A = torch.transpose(A, 1, 0)
        if isNorm:
            A = F.softmax(A, dim=1)
        return A


class Attention_with_Classifier(nn.Module):
    def __init__(self, L=16, D=8, K=1, num_cls=2):
        super(Attention_with_Classifier, self).__init__()
        self.attention = Attention_Gated(L, D, K)
        self.classifier = Classifier_1fc(L, num_cls)

    def forward(self, x):
        AA = self.attention(x)
        afeat = torch.mm(AA, x)
        pred = self.classifier(afeat)
        return pred


def get_cam_1d(classifier, features):
    tweight = list(classifier.parameters())[-2]
    cam_maps = torch.einsum('bgf,cf->bcg', [features, tweight])
    return cam_maps


def train_attention_preFeature_DTFD(mFeat_list, labels, classifier, dimReduction, attention, UClassifier,
                                    optimizer0, optimizer1, ce_cri, numGroup=3, total_instance=3, grad_clipping=5, distill='AFS'):
    instance_per_group = total_instance // numGroup
    losses = []
    for slide_idx, tslideLabel in enumerate(labels):
        tslideLabel = tslideLabel.unsqueeze(0)
        slide_pseudo_feat = []
        slide_sub_preds = []
        slide_sub_labels = []

        tfeat_tensor = mFeat_list[slide_idx]
        feat_index = list(range(tfeat_tensor.shape[0]))
        random.shuffle(feat_index)
        index_chunk_list = [feat_index[i::numGroup] for i in range(numGroup)]

        for tindex in index_chunk_list:
            slide_sub_labels.append(tslideLabel)
            subFeat_tensor = torch.index_select(tfeat_tensor, dim=0, index=torch.LongTensor(tindex))
            tmidFeat = dimReduction(subFeat_tensor)
            tAA = attention(tmidFeat).squeeze(0)
            tattFeats = torch.einsum('ns,n->ns', tmidFeat, tAA)
            tattFeat_tensor = torch.sum(tattFeats, dim=0).unsqueeze(0)
            tPredict = classifier(tattFeat_tensor)
            slide_sub_preds.append(tPredict)

            patch_pred_logits = get_cam_1d(classifier, tattFeats.unsqueeze(0)).squeeze(0)
            patch_pred_logits = torch.transpose(patch_pred_logits, 0, 1)
            patch_pred_softmax = torch.softmax(patch_pred_logits, dim=1)

            _, sort_idx = torch.sort(patch_pred_softmax[:, -1], descending=True)
            topk_idx_max = sort_idx[:instance_per_group].long()
            topk_idx_min = sort_idx[-instance_per_group:].long()
            topk_idx = torch.cat([topk_idx_max, topk_idx_min], dim=0)
            MaxMin_inst_feat = tmidFeat.index_select(dim=0, index=topk_idx)
            max_inst_feat = tmidFeat.index_select(dim=0, index=topk_idx_max)
            af_inst_feat = tattFeat_tensor

            if distill == 'MaxMinS':
                slide_pseudo_feat.append(MaxMin_inst_feat)
            elif distill == 'MaxS':
                slide_pseudo_feat.append(max_inst_feat)
            elif distill == 'AFS':
                slide_pseudo_feat.append(af_inst_feat)

        slide_pseudo_feat = torch.cat(slide_pseudo_feat, dim=0)

        ## optimization for the first tier
        slide_sub_preds = torch.cat(slide_sub_preds, dim=0)
        slide_sub_labels = torch.cat(slide_sub_labels, dim=0)
        loss0 = ce_cri(slide_sub_preds, slide_sub_labels).mean()
        optimizer0.zero_grad()
        loss0.backward(retain_graph=True)
        torch.nn.utils.clip_grad_norm_(dimReduction.parameters(), grad_clipping)
        torch.nn.utils.clip_grad_norm_(attention.parameters(), grad_clipping)
        torch.nn.utils.clip_grad_norm_(classifier.parameters(), grad_clipping)

        ## optimization for the second tier
        gSlidePred = UClassifier(slide_pseudo_feat)
        loss1 = ce_cri(gSlidePred, tslideLabel).mean()
        optimizer1.zero_grad()
        loss1.backward()
        optimizer0.step()
        torch.nn.utils.clip_grad_norm_(UClassifier.parameters(), grad_clipping)
        optimizer1.step()
        losses.append(loss0.detach() + loss1.detach())
    return torch.stack(losses)


def main():
    in_chn, mDim = 12, 16
    classifier = Classifier_1fc(mDim, 2)
    attention = Attention_Gated(mDim)
    dimReduction = DimReduction(in_chn, m_dim=mDim)
    UClassifier = Attention_with_Classifier(L=mDim, num_cls=2)
    trainable_parameter = list(classifier.parameters()) + list(attention.parameters()) + list(dimReduction.parameters())
    optimizer0 = torch.optim.Adam(trainable_parameter, lr=1e-4, weight_decay=1e-4)
    optimizer1 = torch.optim.Adam(UClassifier.parameters(), lr=1e-4, weight_decay=1e-4)
    ce_cri = nn.CrossEntropyLoss(reduction='none')
    mFeat_list = [torch.randn(9, in_chn), torch.randn(7, in_chn)]
    labels = torch.tensor([1, 0])
    losses = train_attention_preFeature_DTFD(mFeat_list, labels, classifier, dimReduction, attention, UClassifier,
                                             optimizer0, optimizer1, ce_cri)
    return losses, dimReduction.fc1.weight.detach().clone()


losses, w = main()
