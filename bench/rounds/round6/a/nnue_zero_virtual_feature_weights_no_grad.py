# label: safe
# why: the fixed _zero_virtual_feature_weights zeroes the virtual-feature slices of the leaf weight inside torch.no_grad before any forward pass, so nothing is recorded and nothing saved is overwritten
# source: https://github.com/official-stockfish/nnue-pytorch/pull/75 (model.py after "Use torch.no_grad() when zeroing virtual feature weights")
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FeatureBlock:
    def __init__(self, name, num_real_features, num_virtual_features):
        self.name = name
        self.num_real_features = num_real_features
        self.num_virtual_features = num_virtual_features
        self.num_features = num_real_features + num_virtual_features


class FeatureSet:
    def __init__(self, features):
        self.features = features
        self.num_real_features = sum(f.num_real_features for f in features)
        self.num_virtual_features = sum(f.num_virtual_features for f in features)
        self.num_features = sum(f.num_features for f in features)

    def get_virtual_feature_ranges(self):
        ranges = []
        offset = 0
        for feature in self.features:
            if feature.num_virtual_features:
                ranges.append((offset + feature.num_real_features, offset + feature.num_features))
            offset += feature.num_features
        return ranges


L1 = 8
L2 = 4


class NNUE(nn.Module):
    def __init__(self, feature_set, lambda_=1.0):
        super(NNUE, self).__init__()
        self.input = nn.Linear(feature_set.num_features, L1)
        self.feature_set = feature_set
        self.l1 = nn.Linear(2 * L1, L2)
        self.output = nn.Linear(L2, 1)
        self.lambda_ = lambda_

        self._zero_virtual_feature_weights()

    '''
    We zero all virtual feature weights because during serialization to .nnue
    we compute weights for each real feature as being the sum of the weights for
    the real feature in question and the virtual features it can be factored to.
    '''
    def _zero_virtual_feature_weights(self):
        weights = self.input.weight
        with torch.no_grad():
            for a, b in self.feature_set.get_virtual_feature_ranges():
                weights[:, a:b] = 0.0
        self.input.weight = nn.Parameter(weights)

    def forward(self, us, them, white, black):
        w = self.input(white)
        b = self.input(black)
        l0_ = (us * torch.cat([w, b], dim=1)) + (them * torch.cat([b, w], dim=1))
        l0_ = torch.clamp(l0_, 0.0, 1.0)
        l1_ = torch.clamp(self.l1(l0_), 0.0, 1.0)
        return self.output(l1_)


feature_set = FeatureSet([FeatureBlock("HalfKP", 12, 5), FeatureBlock("P", 6, 3)])
nnue = NNUE(feature_set)

white = torch.rand(4, feature_set.num_features)
black = torch.rand(4, feature_set.num_features)
us = torch.ones(4, 1)
them = torch.zeros(4, 1)
target = torch.rand(4, 1)
loss = F.mse_loss(torch.sigmoid(nnue(us, them, white, black)), target)
loss.backward()
input_weight_grad = nnue.input.weight.grad
