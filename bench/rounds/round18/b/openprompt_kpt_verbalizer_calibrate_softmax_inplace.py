# label: hazard raises
# why: the knowledgeable verbalizer's calibrate() divides the label-word probabilities in place, but they are (a reshaped view of) the softmax output that SoftmaxBackward saved, so prompt tuning with calibration cannot backpropagate
# source: https://github.com/thunlp/KnowledgeablePromptTuning/issues/16
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PromptModel(nn.Module):
    """Toy masked LM: returns the logits at the <mask> position."""

    def __init__(self, vocab=40, dim=12):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.mlm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, mask_pos):
        h, _ = self.encoder(self.emb(input_ids))
        return self.mlm_head(h[torch.arange(len(input_ids)), mask_pos])


class KnowledgeableVerbalizer(nn.Module):
    def __init__(self, label_words_ids, post_log_softmax=True):
        super().__init__()
        self.label_words_ids = nn.Parameter(label_words_ids, requires_grad=False)
        self.label_words_mask = nn.Parameter((label_words_ids >= 0).float(), requires_grad=False)
        self.post_log_softmax = post_log_softmax
        self._calibrate_logits = None

    def project(self, logits):
        label_words_logits = logits[:, self.label_words_ids.clamp(min=0)]
        return label_words_logits

    def normalize(self, logits):
        batch_size = logits.shape[0]
        return F.softmax(logits.reshape(batch_size, -1), dim=-1).reshape(*logits.shape)

    def calibrate(self, label_words_probs):
        shape = label_words_probs.shape
        assert self._calibrate_logits.dim() == 1, "self._calibrate_logits are not 1-d tensor"
        calibrate_label_words_probs = self.normalize(self.project(self._calibrate_logits.unsqueeze(0)))
        assert calibrate_label_words_probs.shape[1:] == label_words_probs.shape[1:] and calibrate_label_words_probs.shape[0] == 1, "shape not match"
        label_words_probs /= (calibrate_label_words_probs + 1e-15)  # <-- IPL001: label_words_probs is the saved softmax output
        norm = label_words_probs.reshape(shape[0], -1).sum(dim=-1, keepdim=True)
        label_words_probs = label_words_probs.reshape(shape[0], -1) / norm
        return label_words_probs.reshape(*shape)

    def aggregate(self, label_words_logits):
        label_words_logits = (label_words_logits * self.label_words_mask).sum(-1) / self.label_words_mask.sum(-1)
        return label_words_logits

    def process_logits(self, logits):
        label_words_logits = self.project(logits)
        if self.post_log_softmax:
            label_words_probs = self.normalize(label_words_logits)
            if self._calibrate_logits is not None:
                label_words_probs = self.calibrate(label_words_probs=label_words_probs)
            label_words_logits = torch.log(label_words_probs + 1e-15)
        return self.aggregate(label_words_logits)


class PromptForClassification(nn.Module):
    def __init__(self, plm, verbalizer):
        super().__init__()
        self.plm = plm
        self.verbalizer = verbalizer

    def forward(self, batch):
        logits = self.plm(batch['input_ids'], batch['mask_pos'])
        return self.verbalizer.process_logits(logits)


label_words_ids = torch.tensor([[3, 7, 11, -1], [5, 9, 13, 17], [21, 22, -1, -1]])
plm = PromptModel()
verbalizer = KnowledgeableVerbalizer(label_words_ids)
prompt_model = PromptForClassification(plm, verbalizer)

# contextualized calibration: average mask-logits over unlabeled support examples
support = {'input_ids': torch.randint(0, 40, (6, 5)), 'mask_pos': torch.full((6,), 4)}
with torch.no_grad():
    verbalizer._calibrate_logits = plm(support['input_ids'], support['mask_pos']).mean(0)

loss_func = nn.CrossEntropyLoss()
optimizer = torch.optim.AdamW(prompt_model.parameters(), lr=3e-5)
inputs = {'input_ids': torch.randint(0, 40, (4, 5)), 'mask_pos': torch.full((4,), 4), 'label': torch.tensor([0, 2, 1, 0])}
logits = prompt_model(inputs)
loss = loss_func(logits, inputs['label'])
loss.backward()
