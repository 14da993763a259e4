# label: hazard raises no-twin
# why: the SymmNets solver steps the classifier optimizer (in-place update of the shared 2K-way classifier weight) between the classifier loss backward and the feature-extractor loss backward, whose graph saved that weight
# source: https://github.com/Gorilla-Lab-SCUT/MultiClassDA/issues/2
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FeatureExtractor(nn.Module):
    def __init__(self, in_dim=12, feat_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, feat_dim), nn.ReLU())

    def forward(self, x):
        return self.net(x)


class SymmClassifier(nn.Module):
    """one linear layer producing [source-task logits | target-task logits] (2 * num_classes)"""

    def __init__(self, feat_dim=16, num_classes=3):
        super().__init__()
        self.fc = nn.Linear(feat_dim, 2 * num_classes)

    def forward(self, x):
        return self.fc(x)


def CrossEntropyClassWeighted(logits, labels):
    return F.cross_entropy(logits, labels)


class SymmNetsV2Solver:
    def __init__(self, num_classes=3, lam=0.1):
        self.num_classes = num_classes
        self.lam = lam
        self.G = FeatureExtractor()
        self.F = SymmClassifier(num_classes=num_classes)
        self.optimizer_feature_extractor = torch.optim.SGD(self.G.parameters(), lr=0.01, momentum=0.9)
        self.optimizer_classifier = torch.optim.SGD(self.F.parameters(), lr=0.01, momentum=0.9)

    def update_network(self, source_data, source_gt, target_data):
        feature_source = self.G(source_data)
        output_source = self.F(feature_source)
        feature_target = self.G(target_data)
        output_target = self.F(feature_target)
        K = self.num_classes

        # classifier: source task + target task classifiers, domain discrimination
        loss_task_s_Cs = CrossEntropyClassWeighted(output_source[:, :K], source_gt)
        loss_task_s_Ct = CrossEntropyClassWeighted(output_source[:, K:], source_gt)
        prob_source = F.softmax(output_source, dim=1)
        prob_target = F.softmax(output_target, dim=1)
        loss_domain_st_Cst_part1 = -torch.log(prob_source[:, :K].sum(1)).mean()
        loss_domain_st_Cst_part2 = -torch.log(prob_target[:, K:].sum(1)).mean()
        loss_domain_st_Cst = loss_domain_st_Cst_part1 + loss_domain_st_Cst_part2

        # feature extractor: category confusion + domain confusion + target entropy
        loss_category_st_G = 0.5 * F.nll_loss(torch.log(prob_source[:, :K] + prob_source[:, K:]), source_gt)
        loss_domain_st_G = -0.5 * (torch.log(prob_target[:, :K].sum(1)).mean() + torch.log(prob_target[:, K:].sum(1)).mean())
        prob_target_sum = prob_target[:, :K] + prob_target[:, K:]
        loss_target_entropy = -(prob_target_sum * torch.log(prob_target_sum + 1e-6)).sum(1).mean()

        loss_summary_classifier = loss_task_s_Cs + loss_task_s_Ct + loss_domain_st_Cst
        loss_summary_feature_extractor = loss_category_st_G + self.lam * (loss_domain_st_G + loss_target_entropy)

        self.optimizer_classifier.zero_grad()
        loss_summary_classifier.backward(retain_graph=True)
        self.optimizer_classifier.step()  # <-- IPL001: updates the classifier weight that the feature-extractor loss graph saved
        self.optimizer_feature_extractor.zero_grad()
        loss_summary_feature_extractor.backward()
        self.optimizer_feature_extractor.step()
        return loss_summary_classifier.detach(), loss_summary_feature_extractor.detach()


solver = SymmNetsV2Solver()
source_data = torch.randn(6, 12)
source_gt = torch.randint(0, 3, (6,))
target_data = torch.randn(6, 12)
losses = solver.update_network(source_data, source_gt, target_data)
