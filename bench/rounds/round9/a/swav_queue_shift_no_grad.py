# label: safe
# why: the SwAV queue is shifted and refilled in place inside torch.no_grad() after its mm with the prototypes (also under no_grad), with the clone() guarding the overlapping copy
# source: https://github.com/facebookresearch/swav/blob/main/main_swav.py
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Args:
    crops_for_assign = [0, 1]
    nmb_crops = [2]
    temperature = 0.1
    epsilon = 0.05
    sinkhorn_iterations = 3
    queue_length = 8


args = Args()


@torch.no_grad()
def distributed_sinkhorn(out):
    Q = torch.exp(out / args.epsilon).t()  # Q is K-by-B for consistency with notations from our paper
    B = Q.shape[1]
    K = Q.shape[0]  # how many prototypes
    sum_Q = torch.sum(Q)
    Q /= sum_Q
    for it in range(args.sinkhorn_iterations):
        sum_of_rows = torch.sum(Q, dim=1, keepdim=True)
        Q /= sum_of_rows
        Q /= K
        Q /= torch.sum(Q, dim=0, keepdim=True)
        Q /= B
    Q *= B  # the colomns must sum to 1 so that Q is an assignment
    return Q.t()


class SwAVModel(nn.Module):
    def __init__(self, feat_dim=4, nmb_prototypes=5):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(6, 8), nn.ReLU(inplace=True), nn.Linear(8, feat_dim))
        self.prototypes = nn.Linear(feat_dim, nmb_prototypes, bias=False)

    def forward(self, inputs):
        x = torch.cat(inputs)
        embedding = F.normalize(self.backbone(x), dim=1, p=2)
        return embedding, self.prototypes(embedding)


model = SwAVModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
queue = torch.zeros(len(args.crops_for_assign), args.queue_length, 4)
use_the_queue = False
losses = []
for it in range(3):
    inputs = [torch.randn(3, 6) for _ in range(np.sum(args.nmb_crops))]
    embedding, output = model(inputs)
    embedding = embedding.detach()
    bs = inputs[0].size(0)

    # ============ swav loss ... ============
    loss = 0
    for i, crop_id in enumerate(args.crops_for_assign):
        with torch.no_grad():
            out = output[bs * crop_id: bs * (crop_id + 1)].detach()

            # time to use the queue
            if queue is not None:
                if use_the_queue or not torch.all(queue[i, -1, :] == 0):
                    use_the_queue = True
                    out = torch.cat((torch.mm(
                        queue[i],
                        model.prototypes.weight.t()
                    ), out))
                # fill the queue
                queue[i, bs:] = queue[i, :-bs].clone()
                queue[i, :bs] = embedding[crop_id * bs: (crop_id + 1) * bs]

            # get assignments
            q = distributed_sinkhorn(out)[-bs:]

        # cluster assignment prediction
        subloss = 0
        for v in np.delete(np.arange(np.sum(args.nmb_crops)), crop_id):
            x = output[bs * v: bs * (v + 1)] / args.temperature
            subloss -= torch.mean(torch.sum(q * F.log_softmax(x, dim=1), dim=1))
        loss += subloss / (np.sum(args.nmb_crops) - 1)
    loss /= len(args.crops_for_assign)

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
final_queue = queue
