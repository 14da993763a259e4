# label: hazard silent
# why: FDS.smooth writes the calibrated features back into `encoding` through the alias `encoding_s`, so the `encoding` returned for the running-statistics update is already smoothed instead of the raw features.
# source: https://github.com/YyzHarry/imbalanced-regression/issues/6 (code: https://github.com/YyzHarry/imbalanced-regression/blob/c37d6f46d35e5a0b37277d8d925ad112ed8ef487/imdb-wiki-dir/fds.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


def calibrate_mean_var(matrix, m1, v1, m2, v2, clip_min=0.1, clip_max=10):
    if torch.sum(v1) < 1e-10:
        return matrix
    if (v1 == 0.).any():
        valid = (v1 != 0.)
        factor = torch.clamp(v2[valid] / v1[valid], clip_min, clip_max)
        matrix[:, valid] = (matrix[:, valid] - m1[valid]) * torch.sqrt(factor) + m2[valid]
        return matrix
    factor = torch.clamp(v2 / v1, clip_min, clip_max)
    return (matrix - m1) * torch.sqrt(factor) + m2


class FDS(nn.Module):
    def __init__(self, feature_dim, bucket_num=4, bucket_start=0, start_smooth=1):
        super(FDS, self).__init__()
        self.feature_dim = feature_dim
        self.bucket_num = bucket_num
        self.bucket_start = bucket_start
        self.start_smooth = start_smooth
        self.register_buffer('running_mean_last_epoch', torch.zeros(bucket_num - bucket_start, feature_dim))
        self.register_buffer('running_var_last_epoch', torch.ones(bucket_num - bucket_start, feature_dim))
        self.register_buffer('smoothed_mean_last_epoch', torch.randn(bucket_num - bucket_start, feature_dim) * 0.1)
        self.register_buffer('smoothed_var_last_epoch', torch.rand(bucket_num - bucket_start, feature_dim) + 0.5)

    def smooth(self, features, labels, epoch):
        if epoch < self.start_smooth:
            return features

        labels = labels.squeeze(1)
        for label in torch.unique(labels):
            if label > self.bucket_num - 1 or label < self.bucket_start:
                continue
            elif label == self.bucket_start:
                features[labels <= label] = calibrate_mean_var(  # <-- IPL004, IPL002: writes into the caller's `encoding`
                    features[labels <= label],
                    self.running_mean_last_epoch[int(label - self.bucket_start)],
                    self.running_var_last_epoch[int(label - self.bucket_start)],
                    self.smoothed_mean_last_epoch[int(label - self.bucket_start)],
                    self.smoothed_var_last_epoch[int(label - self.bucket_start)])
            elif label == self.bucket_num - 1:
                features[labels >= label] = calibrate_mean_var(  # <-- IPL004, IPL002: writes into the caller's `encoding`
                    features[labels >= label],
                    self.running_mean_last_epoch[int(label - self.bucket_start)],
                    self.running_var_last_epoch[int(label - self.bucket_start)],
                    self.smoothed_mean_last_epoch[int(label - self.bucket_start)],
                    self.smoothed_var_last_epoch[int(label - self.bucket_start)])
            else:
                features[labels == label] = calibrate_mean_var(  # <-- IPL004, IPL002: writes into the caller's `encoding`
                    features[labels == label],
                    self.running_mean_last_epoch[int(label - self.bucket_start)],
                    self.running_var_last_epoch[int(label - self.bucket_start)],
                    self.smoothed_mean_last_epoch[int(label - self.bucket_start)],
                    self.smoothed_var_last_epoch[int(label - self.bucket_start)])
        return features


class ResNet(nn.Module):
    def __init__(self, fds=True, start_smooth=1):
        super(ResNet, self).__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.linear = nn.Linear(8, 1)
        self.fds = fds
        self.start_smooth = start_smooth
        if fds:
            self.FDS = FDS(feature_dim=8, start_smooth=start_smooth)

    def forward(self, x, targets=None, epoch=None):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.avgpool(x)
        encoding = x.view(x.size(0), -1)

        encoding_s = encoding

        if self.training and self.fds:
            if epoch >= self.start_smooth:
                encoding_s = self.FDS.smooth(encoding_s, targets, epoch)

        x = self.linear(encoding_s)

        if self.training and self.fds:
            return x, encoding
        else:
            return x


model = ResNet()
model.train()
inputs = torch.randn(6, 3, 8, 8)
targets = torch.tensor([[0], [1], [2], [3], [1], [2]])
outputs, feature = model(inputs, targets, epoch=2)
loss = (outputs.squeeze(1) - targets.squeeze(1).float()).pow(2).mean()
loss.backward()
encodings = feature.detach().clone()
