#!/bin/bash
# One-device performance run, in the zoo's shape: parse --data_path, run Python in the background into a log, wait.
cur_path=`pwd`/../
data_path=""
for para in $*
do
    if [[ $para == --data_path* ]];then
        data_path=`echo ${para#*=}`
    fi
done
if [[ $data_path == "" ]];then
    echo "[Error] para \"data_path\" must be config"
    exit 1
fi
export RANK_SIZE=1
mkdir -p ${cur_path}/test/output/${ASCEND_DEVICE_ID}
cd $cur_path
# pinned to this rank's share of an Ascend server's CPUs, as 108 zoo wrappers do (an empty range below 8 CPUs)
cpucount=`lscpu | grep "CPU(s):" | head -n 1 | awk '{print $2}'`
cpustep=`expr $cpucount / 64`
let a=0*$cpustep
let c=1*$cpustep-1
taskset -c $a-$c python3 train.py --data_dir=${data_path} --epochs=50 > ${cur_path}/test/output/${ASCEND_DEVICE_ID}/train_${ASCEND_DEVICE_ID}.log 2>&1 &
wait
echo "E2E done"
