# label: safe
# why: the forward algorithm writes each alpha[:, t, :] slice (and += the log tag mask) after the previous slice was only read through expand/add, which save nothing; gather/max outputs updated in place are not saved either
# source: https://github.com/allanj/neural-partialCRF/issues/1 (file model/linear_crf_inferencer.py @ 6a4b9fe52fa7b672a7dfd13665588258d3ad3cdd)
import torch
import torch.nn as nn

torch.manual_seed(0)

START, STOP, PAD = "<START>", "<STOP>", "<PAD>"


def log_sum_exp_pytorch(vec):
    maxScores, idx = torch.max(vec, 1)
    maxScores[maxScores == -float("Inf")] = 0
    maxScoresExpanded = maxScores.view(vec.shape[0], 1, vec.shape[2]).expand(vec.shape[0], vec.shape[1], vec.shape[2])
    return maxScores + torch.log(torch.sum(torch.exp(vec - maxScoresExpanded), 1))


class LinearCRF(nn.Module):
    def __init__(self, label2idx):
        super().__init__()
        self.label_size = len(label2idx)
        self.start_idx = label2idx[START]
        self.end_idx = label2idx[STOP]
        self.pad_idx = label2idx[PAD]
        init_transition = torch.randn(self.label_size, self.label_size)
        init_transition[:, self.start_idx] = -10000.0
        init_transition[self.end_idx, :] = -10000.0
        init_transition[:, self.pad_idx] = -10000.0
        init_transition[self.pad_idx, :] = -10000.0
        self.transition = nn.Parameter(init_transition)

    def forward(self, lstm_scores, word_seq_lens, label_tag_mask):
        all_scores = self.calculate_all_scores(lstm_scores=lstm_scores)
        unlabed_score = self.forward_unlabeled(all_scores, word_seq_lens)
        labeled_score = self.forward_labeled(all_scores, word_seq_lens, label_tag_mask)
        return unlabed_score, labeled_score

    def forward_labeled(self, all_scores, word_seq_lens, label_tag_mask):
        batch_size = all_scores.size(0)
        seq_len = all_scores.size(1)
        label_tag_mask = label_tag_mask.float().log()
        alpha = torch.zeros(batch_size, seq_len, self.label_size)
        alpha[:, 0, :] = all_scores[:, 0, self.start_idx, :]
        alpha[:, 0, :] += label_tag_mask[:, 0, :]
        for word_idx in range(1, seq_len):
            before_log_sum_exp = alpha[:, word_idx - 1, :].view(batch_size, self.label_size, 1).expand(batch_size, self.label_size, self.label_size) + all_scores[:, word_idx, :, :]
            alpha[:, word_idx, :] = log_sum_exp_pytorch(before_log_sum_exp)
            alpha[:, word_idx, :] += label_tag_mask[:, word_idx, :]
        last_alpha = torch.gather(alpha, 1, word_seq_lens.view(batch_size, 1, 1).expand(batch_size, 1, self.label_size) - 1).view(batch_size, self.label_size)
        last_alpha += self.transition[:, self.end_idx].view(1, self.label_size).expand(batch_size, self.label_size)
        last_alpha = log_sum_exp_pytorch(last_alpha.view(batch_size, self.label_size, 1)).view(batch_size)
        return torch.sum(last_alpha)

    def forward_unlabeled(self, all_scores, word_seq_lens):
        batch_size = all_scores.size(0)
        seq_len = all_scores.size(1)
        alpha = torch.zeros(batch_size, seq_len, self.label_size)
        alpha[:, 0, :] = all_scores[:, 0, self.start_idx, :]
        for word_idx in range(1, seq_len):
            before_log_sum_exp = alpha[:, word_idx - 1, :].view(batch_size, self.label_size, 1).expand(batch_size, self.label_size, self.label_size) + all_scores[:, word_idx, :, :]
            alpha[:, word_idx, :] = log_sum_exp_pytorch(before_log_sum_exp)
        last_alpha = torch.gather(alpha, 1, word_seq_lens.view(batch_size, 1, 1).expand(batch_size, 1, self.label_size) - 1).view(batch_size, self.label_size)
        last_alpha += self.transition[:, self.end_idx].view(1, self.label_size).expand(batch_size, self.label_size)
        last_alpha = log_sum_exp_pytorch(last_alpha.view(batch_size, self.label_size, 1)).view(batch_size)
        return torch.sum(last_alpha)

    def calculate_all_scores(self, lstm_scores):
        batch_size = lstm_scores.size(0)
        seq_len = lstm_scores.size(1)
        return self.transition.view(1, 1, self.label_size, self.label_size).expand(batch_size, seq_len, self.label_size, self.label_size) + \
            lstm_scores.view(batch_size, seq_len, 1, self.label_size).expand(batch_size, seq_len, self.label_size, self.label_size)


label2idx = {PAD: 0, "O": 1, "B-PER": 2, "I-PER": 3, START: 4, STOP: 5}
crf = LinearCRF(label2idx)
encoder = nn.LSTM(3, 6, batch_first=True)
words = torch.randn(2, 4, 3)
lstm_out, _ = encoder(words)
word_seq_lens = torch.tensor([4, 3])
label_tag_mask = torch.ones(2, 4, 6)
label_tag_mask[0, 1, [0, 4, 5]] = 0
label_tag_mask[1, 2, [0, 3, 4, 5]] = 0
unlabeled, labeled = crf(lstm_out, word_seq_lens, label_tag_mask)
nll = unlabeled - labeled
nll.backward()
transition_grad = crf.transition.grad
