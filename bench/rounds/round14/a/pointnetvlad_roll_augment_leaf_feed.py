# label: hazard raises
# why: run_model marks feed_tensor as requiring grad (a leaf) and the added process_data augmentation then rolls each cloud back into ob[i] in place, writing into a view of that leaf.
# source: https://github.com/cattaneod/PointNetVlad-Pytorch/issues/4 (run_model from train_pointnetvlad.py @ b4c3949efaf326c4ff65f23452cbb9611c609aad)
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class cfg:
    NUM_POINTS = 16
    BATCH_NUM_QUERIES = 2
    TRAIN_POSITIVES_PER_QUERY = 2
    TRAIN_NEGATIVES_PER_QUERY = 2
    FEATURE_OUTPUT_DIM = 8
    MARGIN_1 = 0.5


torch.manual_seed(0)
np.random.seed(0)
device = "cpu"


class PointNetfeat(nn.Module):
    def __init__(self, num_points):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, (1, 3))
        self.conv2 = nn.Conv2d(16, 32, (1, 1))
        self.bn1 = nn.BatchNorm2d(16)
        self.bn2 = nn.BatchNorm2d(32)
        self.mp1 = nn.MaxPool2d((num_points, 1), 1)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return self.mp1(x).view(x.size(0), -1)


class PointNetVlad(nn.Module):
    def __init__(self, num_points=cfg.NUM_POINTS, output_dim=cfg.FEATURE_OUTPUT_DIM):
        super().__init__()
        self.point_net = PointNetfeat(num_points)
        self.fc = nn.Linear(32, output_dim)

    def forward(self, x):
        return F.normalize(self.fc(self.point_net(x)), dim=1)


def process_data(ob):
    # random rotation about the z axis is approximated by rolling the point order
    for i in range(ob.shape[0]):
        seed = int(np.random.randint(1, cfg.NUM_POINTS))
        ob[i] = torch.roll(ob[i], seed, dims=1)  # <-- IPL003: ob is a leaf that requires grad; ob[i] is a view of it
    return ob


def run_model(model, queries, positives, negatives, other_neg, require_grad=True):
    queries_tensor = torch.from_numpy(queries).float()
    positives_tensor = torch.from_numpy(positives).float()
    negatives_tensor = torch.from_numpy(negatives).float()
    other_neg_tensor = torch.from_numpy(other_neg).float()
    feed_tensor = torch.cat((queries_tensor, positives_tensor, negatives_tensor, other_neg_tensor), 1)
    feed_tensor = feed_tensor.view((-1, 1, cfg.NUM_POINTS, 3))
    feed_tensor.requires_grad_(require_grad)
    feed_tensor = process_data(feed_tensor)
    feed_tensor = feed_tensor.to(device)
    if require_grad:
        output = model(feed_tensor)
    else:
        with torch.no_grad():
            output = model(feed_tensor)
    output = output.view(cfg.BATCH_NUM_QUERIES, -1, cfg.FEATURE_OUTPUT_DIM)
    o1, o2, o3, o4 = torch.split(output, [1, cfg.TRAIN_POSITIVES_PER_QUERY, cfg.TRAIN_NEGATIVES_PER_QUERY, 1], dim=1)
    return o1, o2, o3, o4


def triplet_loss(q_vec, pos_vecs, neg_vecs, other_neg, margin):
    best_pos = ((pos_vecs - q_vec) ** 2).sum(2).min(1)[0]
    neg = ((neg_vecs - q_vec) ** 2).sum(2)
    return F.relu(margin + best_pos.unsqueeze(1) - neg).mean()


model = PointNetVlad()
optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
queries = np.random.rand(cfg.BATCH_NUM_QUERIES, 1, cfg.NUM_POINTS, 3).astype(np.float32)
positives = np.random.rand(cfg.BATCH_NUM_QUERIES, cfg.TRAIN_POSITIVES_PER_QUERY, cfg.NUM_POINTS, 3).astype(np.float32)
negatives = np.random.rand(cfg.BATCH_NUM_QUERIES, cfg.TRAIN_NEGATIVES_PER_QUERY, cfg.NUM_POINTS, 3).astype(np.float32)
other_neg = np.random.rand(cfg.BATCH_NUM_QUERIES, 1, cfg.NUM_POINTS, 3).astype(np.float32)

model.train()
optimizer.zero_grad()
output_queries, output_positives, output_negatives, output_other_neg = run_model(model, queries, positives, negatives, other_neg)
loss = triplet_loss(output_queries, output_positives, output_negatives, output_other_neg, cfg.MARGIN_1)
loss.backward()
optimizer.step()
