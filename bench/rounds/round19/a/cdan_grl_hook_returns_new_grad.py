# label: safe
# why: the gradient-reversal hook returns a new tensor (-coeff * grad.clone()) instead of editing the incoming grad in place, and the entropy weighting works on detached softmax outputs, so both domain-adversarial backward passes are exact.
# source: https://github.com/thuml/CDAN/issues/6
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def calc_coeff(iter_num, high=1.0, low=0.0, alpha=10.0, max_iter=10000.0):
    return float(2.0 * (high - low) / (1.0 + np.exp(-alpha * iter_num / max_iter)) - (high - low) + low)


def grl_hook(coeff):
    def fun1(grad):
        return -coeff * grad.clone()
    return fun1


class AdversarialNetwork(nn.Module):
    def __init__(self, in_feature, hidden_size):
        super(AdversarialNetwork, self).__init__()
        self.ad_layer1 = nn.Linear(in_feature, hidden_size)
        self.ad_layer2 = nn.Linear(hidden_size, 1)
        self.relu1 = nn.ReLU()
        self.sigmoid = nn.Sigmoid()
        self.iter_num = 2000
        self.max_iter = 10000.0

    def forward(self, x):
        if self.training:
            self.iter_num += 1
        coeff = calc_coeff(self.iter_num, 1.0, 0.0, 10, self.max_iter)
        x = x * 1.0
        x.register_hook(grl_hook(coeff))
        x = self.relu1(self.ad_layer1(x))
        y = self.sigmoid(self.ad_layer2(x))
        return y


def Entropy(input_):
    epsilon = 1e-5
    entropy = -input_ * torch.log(input_ + epsilon)
    return torch.sum(entropy, dim=1)


def CDAN(input_list, ad_net, entropy=None, coeff=None):
    softmax_output = input_list[1].detach()
    feature = input_list[0]
    op_out = torch.bmm(softmax_output.unsqueeze(2), feature.unsqueeze(1))
    ad_out = ad_net(op_out.view(-1, softmax_output.size(1) * feature.size(1)))
    batch_size = softmax_output.size(0) // 2
    dc_target = torch.from_numpy(np.array([[1]] * batch_size + [[0]] * batch_size)).float()
    if entropy is not None:
        entropy.register_hook(grl_hook(coeff))
        entropy = 1.0 + torch.exp(-entropy)
        source_mask = torch.ones_like(entropy)
        source_mask[feature.size(0) // 2:] = 0
        source_weight = entropy * source_mask
        target_mask = torch.ones_like(entropy)
        target_mask[0:feature.size(0) // 2] = 0
        target_weight = entropy * target_mask
        weight = source_weight / torch.sum(source_weight).detach().item() + \
            target_weight / torch.sum(target_weight).detach().item()
        return torch.sum(weight.view(-1, 1) * nn.BCELoss(reduction='none')(ad_out, dc_target)) / torch.sum(weight).detach().item()
    return nn.BCELoss()(ad_out, dc_target)


base_network = nn.Sequential(nn.Linear(10, 6), nn.ReLU())
classifier = nn.Linear(6, 3)
ad_net = AdversarialNetwork(6 * 3, 8)

inputs_source, inputs_target = torch.randn(4, 10), torch.randn(4, 10)
labels_source = torch.tensor([0, 1, 2, 1])
features = base_network(torch.cat((inputs_source, inputs_target), dim=0))
outputs = classifier(features)
softmax_out = F.softmax(outputs, dim=1)
entropy = Entropy(softmax_out)
transfer_loss = CDAN([features, softmax_out], ad_net, entropy, calc_coeff(2000))
classifier_loss = F.cross_entropy(outputs[:4], labels_source)
total_loss = 1.0 * transfer_loss + classifier_loss
total_loss.backward()
