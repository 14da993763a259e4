# label: hazard raises no-twin
# why: after dropping .data during a PyTorch upgrade, the constructor copies pretrained vectors with self.emb.weight.copy_(init_emb) outside no_grad, an in-place op on a leaf Parameter that requires grad when the embedding is not frozen.
# source: https://github.com/dasguptar/treelstm.pytorch/pull/26
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

PAD = 0


class Tree(object):
    def __init__(self, idx):
        self.idx = idx
        self.children = []
        self.num_children = 0
        self.state = None

    def add_child(self, child):
        self.children.append(child)
        self.num_children += 1


class ChildSumTreeLSTM(nn.Module):
    def __init__(self, in_dim, mem_dim):
        super().__init__()
        self.in_dim = in_dim
        self.mem_dim = mem_dim
        self.ioux = nn.Linear(self.in_dim, 3 * self.mem_dim)
        self.iouh = nn.Linear(self.mem_dim, 3 * self.mem_dim)
        self.fx = nn.Linear(self.in_dim, self.mem_dim)
        self.fh = nn.Linear(self.mem_dim, self.mem_dim)

    def node_forward(self, inputs, child_c, child_h):
        child_h_sum = torch.sum(child_h, dim=0, keepdim=True)
        iou = self.ioux(inputs) + self.iouh(child_h_sum)
        i, o, u = torch.split(iou, iou.size(1) // 3, dim=1)
        i, o, u = torch.sigmoid(i), torch.sigmoid(o), torch.tanh(u)
        f = torch.sigmoid(self.fh(child_h) + self.fx(inputs).repeat(len(child_h), 1))
        fc = torch.mul(f, child_c)
        c = torch.mul(i, u) + torch.sum(fc, dim=0, keepdim=True)
        h = torch.mul(o, torch.tanh(c))
        return c, h

    def forward(self, tree, inputs):
        for idx in range(tree.num_children):
            self.forward(tree.children[idx], inputs)
        if tree.num_children == 0:
            child_c = inputs[0].detach().new(1, self.mem_dim).fill_(0.).requires_grad_()
            child_h = inputs[0].detach().new(1, self.mem_dim).fill_(0.).requires_grad_()
        else:
            child_c, child_h = zip(*map(lambda x: x.state, tree.children))
            child_c, child_h = torch.cat(child_c, dim=0), torch.cat(child_h, dim=0)
        tree.state = self.node_forward(inputs[tree.idx], child_c, child_h)
        return tree.state


class Similarity(nn.Module):
    def __init__(self, mem_dim, hidden_dim, num_classes):
        super().__init__()
        self.wh = nn.Linear(2 * mem_dim, hidden_dim)
        self.wp = nn.Linear(hidden_dim, num_classes)

    def forward(self, lvec, rvec):
        mult_dist = torch.mul(lvec, rvec)
        abs_dist = torch.abs(torch.add(lvec, -rvec))
        vec_dist = torch.cat((mult_dist, abs_dist), 1)
        out = torch.sigmoid(self.wh(vec_dist))
        return F.log_softmax(self.wp(out), dim=1)


class SimilarityTreeLSTM(nn.Module):
    def __init__(self, vocab_size, in_dim, mem_dim, hidden_dim, num_classes, sparsity, freeze, init_emb):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, in_dim, padding_idx=PAD, sparse=sparsity)
        if freeze:
            self.emb.weight.requires_grad = False
        self.emb.weight.copy_(init_emb)  # <-- IPL003: in-place copy into a leaf Parameter that requires grad
        self.childsumtreelstm = ChildSumTreeLSTM(in_dim, mem_dim)
        self.similarity = Similarity(mem_dim, hidden_dim, num_classes)

    def forward(self, ltree, linputs, rtree, rinputs):
        linputs = self.emb(linputs)
        rinputs = self.emb(rinputs)
        lstate, lhidden = self.childsumtreelstm(ltree, linputs)
        rstate, rhidden = self.childsumtreelstm(rtree, rinputs)
        return self.similarity(lstate, rstate)


def chain_tree(n):
    root = Tree(0)
    node = root
    for i in range(1, n):
        child = Tree(i)
        node.add_child(child)
        node = child
    return root


vocab_size, in_dim = 10, 4
emb = torch.zeros(vocab_size, in_dim).normal_(0, 0.05)
model = SimilarityTreeLSTM(vocab_size, in_dim, mem_dim=5, hidden_dim=6, num_classes=3,
                           sparsity=False, freeze=False, init_emb=emb)
ltree, rtree = chain_tree(3), chain_tree(2)
linputs, rinputs = torch.tensor([1, 4, 2]), torch.tensor([3, 5])
target = torch.tensor([[0.2, 0.5, 0.3]])
output = model(ltree, linputs, rtree, rinputs)
loss = F.kl_div(output, target, reduction="batchmean")
loss.backward()
